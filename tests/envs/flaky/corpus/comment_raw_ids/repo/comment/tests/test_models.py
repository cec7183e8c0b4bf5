from comment.models import Comment


class CommentModelManagerTest:
    def setup_method(self):
        self.parent_comment_1 = Comment("parent comment 1")

    def test_get_parent_comment(self):
        # no parent_id doesn't exist passed
        assert Comment.objects.get_parent_comment(100) is None
        parent_comment = Comment.objects.get_parent_comment(1)
        assert parent_comment is not None
        assert parent_comment == self.parent_comment_1

    def test_reply(self):
        child = Comment("child", parent=self.parent_comment_1)
        assert child.parent is self.parent_comment_1
