class Breathe:
    """Grammar merger (class-level registry, like the real singleton)."""

    contexts = {}
    global_extras = []

    @classmethod
    def add_global_extras(cls, *extras):
        cls.global_extras.extend(extras)

    @classmethod
    def add_commands(cls, context, mapping):
        cls.contexts.setdefault(context, {}).update(mapping)

    @classmethod
    def clear(cls):
        cls.contexts = {}
        cls.global_extras = []
