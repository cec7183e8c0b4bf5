import unittest

from twisted.python.compat import frozenset


class CompatTests(unittest.TestCase):
    def test_frozenset(self):
        a = frozenset(['a', 'b'])
        self.assertRaises(AttributeError, getattr, a, "add")
        self.assertEqual(list(a), ['a', 'b'])
