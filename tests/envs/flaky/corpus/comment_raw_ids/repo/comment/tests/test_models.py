import unittest

from comment.models import Comment


class CommentModelManagerTest(unittest.TestCase):
    def setUp(self):
        self.parent_comment_1 = Comment("parent comment 1")

    def test_get_parent_comment(self):
        # no parent_id doesn't exist passed
        self.assertIsNone(Comment.objects.get_parent_comment(100))
        parent_comment = Comment.objects.get_parent_comment(1)
        self.assertIsNotNone(parent_comment)
        self.assertEqual(parent_comment, self.parent_comment_1)

    def test_reply(self):
        child = Comment("child", parent=self.parent_comment_1)
        self.assertIs(child.parent, self.parent_comment_1)
