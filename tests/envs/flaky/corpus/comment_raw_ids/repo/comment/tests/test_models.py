from comment.models import Comment


def test_create_comment():
    comment = Comment("first")
    assert comment.id == 1
    assert Comment.get(1).content == "first"


def test_reply():
    parent = Comment("parent")
    child = Comment("child", parent=parent)
    assert child.parent is parent
