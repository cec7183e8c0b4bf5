import itertools


class Comment:
    _ids = itertools.count(1)  # the table's id sequence
    objects = {}

    def __init__(self, content, parent=None):
        self.id = next(Comment._ids)
        self.content = content
        self.parent = parent
        Comment.objects[self.id] = self

    @classmethod
    def get(cls, id):
        return cls.objects[id]
