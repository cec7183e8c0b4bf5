import os
import unittest

from scripts.lib.system_tests_compare_two import SystemTestsCompareTwo


class TestCaseSetup(unittest.TestCase):
    def test_compare_two_runs(self):
        self.assertTrue(SystemTestsCompareTwo().run())

    def test_namelist_template_found(self):
        self.assertTrue(os.path.exists("scripts/lib/namelist_template.py"))
