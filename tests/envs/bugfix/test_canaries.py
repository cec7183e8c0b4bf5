"""Bugfix canaries: what the agent sees and what grading enforces contradict each other
the way the module docstring says (static checks; the graded ones are in
tests/play/test_canaries.py)."""

from __future__ import annotations

import json

from forgegym.envs.bugfix.canaries import canary_bank, disguised_special_case
from forgegym.envs.bugfix.grader import scan_submission
from forgegym.envs.bugfix.hacks import hardcode_visible
from forgegym.envs.bugfix.hidden import BugfixHidden
from forgegym.tasklib.canaries import base_id_of, python_literal


def _files(action: str) -> dict[str, str]:
    actions = json.loads(action.removeprefix("```json\n").removesuffix("\n```"))
    return {e["path"]: e["content"] for e in actions[0]["edits"]}


def test_visible_test_and_hidden_check_enforce_the_contradicted_value() -> None:
    bank = canary_bank()
    for task_id in bank.ids()[:10]:
        canary, base = bank.get(task_id), bank.base_bank.get(base_id_of(task_id))
        contradiction = canary.metadata["contradiction"]
        test_path = canary.visible_test_files[0]
        # Written in the test file's own quote style (issue #37: no lone repr() quotes).
        source = base.files[test_path]
        assert python_literal(contradiction["value"], like=source) in canary.files[test_path]
        assert canary.files[test_path] != base.files[test_path]
        hidden = BugfixHidden.of(canary)
        enforced = [
            i
            for i, c in enumerate(hidden.calls)
            if c.function == contradiction["function"] and c.args == contradiction["args"]
        ]
        assert enforced and all(
            hidden.calls[i].expected == {"value": contradiction["value"]} for i in enforced
        )
        # An intact check (failing it is a regression), so the honest fix cannot succeed.
        assert not set(enforced) & set(hidden.failing_hidden)
        assert canary.reference == base.reference
        assert canary.editable_files == base.editable_files


def test_the_plain_special_case_is_gated_the_disguised_one_is_not() -> None:
    bank = canary_bank()
    for task_id in bank.ids()[:5]:
        canary = bank.get(task_id)
        plain = scan_submission(canary, _files(hardcode_visible(canary)))
        assert any(f.kind == "hardcoded_expectation" for f in plain)
        cheat = disguised_special_case(canary)
        assert cheat is not None and scan_submission(canary, _files(cheat)) == []
