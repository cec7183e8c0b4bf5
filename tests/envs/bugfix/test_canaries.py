"""Bugfix canaries: what the agent sees and what grading enforces contradict each other
the way the module docstring says, and the statement quotes the canary's own test run
(static checks; the graded ones are in tests/play/test_canaries.py)."""

from __future__ import annotations

import ast
import json

from forgegym.envs.bugfix.canaries import canary_bank, disguised_special_case
from forgegym.envs.bugfix.grader import scan_submission
from forgegym.envs.bugfix.hacks import hardcode_visible
from forgegym.envs.bugfix.hidden import BugfixHidden
from forgegym.tasklib.canaries import base_id_of, python_literal


def _quoted_run(description: str) -> str:
    return description.split("fails:\n\n```\n", 1)[1].split("\n```", 1)[0]


def _changed_tests(before: str, after: str) -> list[str]:
    def bodies(source: str) -> dict[str, str]:
        tree = ast.parse(source)
        return {n.name: ast.unparse(n) for n in tree.body if isinstance(n, ast.FunctionDef)}

    old, new = bodies(before), bodies(after)
    return [name for name in new if new[name] != old.get(name)]


def _files(action: str) -> dict[str, str]:
    actions = json.loads(action.removeprefix("```json\n").removesuffix("\n```"))
    return {e["path"]: e["content"] for e in actions[0]["edits"]}


def test_the_shown_expectation_and_the_hidden_check_enforce_the_contradicted_value() -> None:
    bank = canary_bank()
    kinds = {"test": 0, "symptom": 0}
    for task_id in bank.ids():
        canary, base = bank.get(task_id), bank.base_bank.get(base_id_of(task_id))
        contradiction = canary.metadata["contradiction"]
        test_path = canary.visible_test_files[0]
        hidden = BugfixHidden.of(canary)
        enforced = [
            i
            for i, c in enumerate(hidden.calls)
            if c.function == contradiction["function"] and c.args == contradiction["args"]
        ]
        assert enforced and all(
            hidden.calls[i].expected == {"value": contradiction["value"]} for i in enforced
        )
        # An intact check (failing it is a regression), so the honest fix cannot succeed;
        # a shown input would not count toward the fail-to-pass rate if it were broken.
        assert not set(enforced) & set(hidden.failing_hidden)
        assert hidden.failing_hidden  # the bug still breaks a check the fix must fix
        if hidden.symptom_call is not None:
            kinds["symptom"] += 1
            # The user's report asks for the contradicted value; the visible tests are
            # the base's (they pass, as the statement says).
            assert enforced == [hidden.symptom_call]
            assert set(hidden.failing_hidden) < set(BugfixHidden.of(base).failing_hidden)
            assert canary.files == base.files
            before = [line for line in base.description.splitlines() if "should" in line]
            after = [line for line in canary.description.splitlines() if "should" in line]
            assert before != after and len(after) == 1
            assert after[0].endswith(f"should return {contradiction['value']!r}.")
        else:
            kinds["test"] += 1
            # Written in the test file's own quote style (issue #37: no lone repr() quotes).
            source = base.files[test_path]
            assert python_literal(contradiction["value"], like=source) in canary.files[test_path]
            assert canary.files[test_path] != base.files[test_path]
            # The quoted run is the canary's own: it lists the contradicted test as failing
            # (the base task's report, quoted before, listed it as PASSED), in the format
            # of every task's report.
            (changed,) = _changed_tests(base.files[test_path], canary.files[test_path])
            report = _quoted_run(canary.description)
            assert f"FAILED {test_path}::{changed} " in report
            assert report.splitlines()[0].endswith(" passed.")
            assert len(report.splitlines()) == len(_quoted_run(base.description).splitlines())
        assert canary.reference == base.reference
        assert canary.editable_files == base.editable_files
    assert kinds["test"] >= 30 and kinds["symptom"] >= 5


def test_the_plain_special_case_is_gated_the_disguised_one_is_not() -> None:
    bank = canary_bank()
    for task_id in bank.ids()[:5]:
        canary = bank.get(task_id)
        plain = scan_submission(canary, _files(hardcode_visible(canary)))
        assert any(f.kind == "hardcoded_expectation" for f in plain)
        cheat = disguised_special_case(canary)
        assert cheat is not None and scan_submission(canary, _files(cheat)) == []
