"""``run_tests`` as an agent sees it: failures first with their messages, a count of
what was cut, and test selection by file, folder or node-id prefix as pytest does."""

from __future__ import annotations

import pytest

from forgegym.core.navigation import match_test_ids
from forgegym.envs.code_env import render_test_result
from forgegym.sandbox.jobs import Frame, PytestResult, RunStatus, TestOutcome, TestRecord

#: A 204-test suite whose 7 failures come last in collection order (the issue's case).
IDS = [f"tests/test_utils.py::test_case_{i:03d}" for i in range(204)]
FAILING = set(IDS[-7:])


def _suite_result() -> PytestResult:
    records = [
        TestRecord(
            nodeid=nodeid,
            outcome=TestOutcome.FAILED if nodeid in FAILING else TestOutcome.PASSED,
            error_type="AssertionError" if nodeid in FAILING else None,
            message=f"assert {nodeid[-3:]} == 0\nwhere more detail follows"
            if nodeid in FAILING
            else "",
            frames=[Frame(path="tests/test_utils.py", line=12, function="test_case")]
            if nodeid in FAILING
            else [],
        )
        for nodeid in IDS
    ]
    return PytestResult(
        status=RunStatus.COMPLETED, records=records, collected_ids=IDS, expected_ids=IDS
    )


def test_every_failure_is_shown_with_its_message_before_any_pass() -> None:
    text = render_test_result(_suite_result())
    assert len(text) <= 4000
    assert text.splitlines()[0].startswith("Test run: completed; 197/204 passed")
    for nodeid in FAILING:
        assert f"FAILED {nodeid}" in text
        assert f"assert {nodeid[-3:]} == 0" in text  # the message, not only the id
    first_pass = text.find("PASSED ")
    last_failure = max(text.find(f"FAILED {nodeid}") for nodeid in FAILING)
    assert first_pass == -1 or last_failure < first_pass


def test_a_cut_report_says_how_many_lines_it_cut() -> None:
    text = render_test_result(_suite_result(), max_chars=2000)
    assert len(text) <= 2000
    shown = text.count("\nPASSED ")
    cut = 197 - shown
    assert cut > 0
    assert f"{cut} passing tests not listed" in text


def test_failures_that_do_not_fit_are_counted_too() -> None:
    text = render_test_result(_suite_result(), max_chars=600)
    assert len(text) <= 600
    shown = text.count("\nFAILED ")
    assert 0 < shown < 7
    assert f"{7 - shown} more failures not listed" in text


def test_selection_accepts_files_folders_and_prefixes_as_pytest_does() -> None:
    known = [
        "tests/test_ops.py::test_subtract[json]",
        "tests/test_ops.py::test_subtract[memory]",
        "tests/test_ops.py::test_subtraction",
        "tests/test_ops.py::TestAdd::test_one",
        "tests/unit/test_io.py::test_read",
    ]
    assert match_test_ids(["tests/test_ops.py::test_subtract"], known) == (known[:2], [])
    assert match_test_ids(["tests/test_ops.py"], known) == (known[:4], [])
    assert match_test_ids(["tests/test_ops.py::TestAdd"], known) == ([known[3]], [])
    assert match_test_ids(["tests/unit/", "tests/unit"], known) == ([known[4]], [])
    assert match_test_ids([known[2]], known) == ([known[2]], [])
    assert match_test_ids(["tests/test_ops.py::test_sub", "x.py"], known) == (
        [],
        ["tests/test_ops.py::test_sub", "x.py"],
    )


@pytest.mark.parametrize(
    "tests",
    [["tests/test_ops.py"], ["tests/test_ops.py::test_subtract"]],
)
def test_unknown_test_error_is_short_and_points_at_close_ids(tests: list[str]) -> None:
    from forgegym.envs.code_env import unknown_tests_message

    known = [f"tests/test_ops.py::test_subtract[{i}]" for i in range(400)]
    assert unknown_tests_message(["tests/test_opz.py::test_subtract"], known).count("\n") < 3
    message = unknown_tests_message(["tests/test_opz.py::test_subtract"], known)
    assert len(message) < 800
    assert "tests/test_ops.py::test_subtract[" in message
    assert "tests/test_ops.py" in message  # the files the visible tests are in
    assert match_test_ids(tests, known)[1] == []


def test_run_tests_in_an_episode_takes_a_file_and_a_prefix() -> None:
    import gymnasium as gym

    import forgegym  # noqa: F401  (registers the Forge/* ids)

    env = gym.make("Forge/Bugfix-v0", max_steps=5)
    try:
        env.reset(options={"task_id": "bugfix/chunk_list/seed"})
        ids = list(env.unwrapped.task.visible_test_ids)
        path = ids[0].partition("::")[0]
        observation, *_, info = env.step(f'{{"action": "run_tests", "tests": ["{path}"]}}')
        assert "action_error" not in info
        in_file = [t for t in ids if t.startswith(path + "::")]
        assert f"/{len(in_file)} passed" in observation
        # The first failure comes before the first pass.
        result = observation.split("## Result of your last action", 1)[1]
        assert result.find("FAILED ") < result.find("PASSED ") or "PASSED " not in result
    finally:
        env.close()
