"""Bug reports show values as Python does: ``it returned None``, not ``null``."""

from __future__ import annotations

import re

from forgegym.envs.bugfix.bank import BugfixTaskBank


def test_no_bug_report_speaks_json() -> None:
    bank = BugfixTaskBank()
    json_words = re.compile(r"\breturn(?:ed)? (?:null|true|false)\b")
    # Every 8th task: building each task of the bank takes minutes on a loaded machine.
    reports = [bank.get(task_id).description for task_id in list(bank.ids())[::8]]
    assert any("returned None" in text for text in reports)
    assert not [text for text in reports if json_words.search(text)]
