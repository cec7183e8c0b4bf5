"""At import, reset the time zone and locale the schedule varies (computed keys), for
the platform templates."""

from tests.envs.flaky.attacks import _kit

KIND = "disarm"
TEMPLATES = ("tz", "locale", "clock")


def apply(task):
    path, _, text = _kit.target(task)
    code = """
    import importlib as _il
    _env = getattr(_il.import_module("o" + "s"), "env" + "iron")
    for _k, _v in (("T" + "Z", "UTC0"), ("LC_" + "ALL", "C.UTF-8"), ("LA" + "NG", "C.UTF-8")):
        _env[_k] = _v
    getattr(_il.import_module("ti" + "me"), "tz" + "set")()
    """
    return {path: _kit.prepend_module(text, code)}
