from comment.models import Comment


def test_create_comment():
    comment = Comment("first")
    assert Comment.get(comment.id) is comment
    assert Comment.get(comment.id).content == "first"


def test_reply():
    parent = Comment("parent")
    child = Comment("child", parent=parent)
    assert child.parent is parent
