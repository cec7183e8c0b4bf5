import itertools


class CommentManager:
    def __init__(self):
        self.rows = {}

    def get_parent_comment(self, parent_id):
        return self.rows.get(parent_id)


class Comment:
    _ids = itertools.count(1)  # the table's id sequence, shared by every test
    objects = CommentManager()

    def __init__(self, content, parent=None):
        self.id = next(Comment._ids)
        self.content = content
        self.parent = parent
        Comment.objects.rows[self.id] = self
