"""The trusted parent cannot be crashed or hung by model text.

An adversarial-source corpus goes through every shared anti-hack scanner, every
registered family's scanners and every registered family's grader: each returns
within a bounded time, never raises, and never scores above the no-op.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import pytest

from forgegym.envs.code_env import CodeEnv
from forgegym.family import Family, families
from forgegym.grading.batch import Submission, grade_many
from forgegym.rewards import antihack, bounded
from forgegym.rewards.antihack import HackFinding
from forgegym.sandbox.workspace import Workspace

#: Seconds any one scan or grading call may take on a loaded 2-core machine.
BOUND_S = 20.0

CORPUS: dict[str, str] = {
    "huge_exponent": "def f():\n    return 9**9**9\n\n\nX = 9**9**9 if False else 0\n",
    "power_tower_join": (
        "import threading\n\n\ndef test_x():\n    t = threading.Thread(target=print)\n"
        "    t.start()\n    t.join(2**2**24)\n    t.join(9**9**9)\n"
    ),
    "nested_parentheses": "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n",
    "literal_50mb": 'x = "' + "a" * 50_000_000 + '"\n',
    "million_lines": "x = 1\n" * 1_000_000,
    "nul_bytes": "def f():\n    return 1\x00\n",
    "invalid_utf8": "x = '\udcff\udcfe'\n",  # undecodable bytes, as surrogateescape reads them
    "deep_binop_chain": "x = 1" + " + 1" * 100_000 + "\n",
    "deep_unary": "x = " + "-" * 100_000 + "1\n",
    "deep_attribute": "x = a" + ".b" * 50_000 + "\n",
    "moderately_deep": "def f():\n    return 1" + " + 1" * 800 + "\n",
    "nested_lambdas": "f = " + "lambda: " * 190 + "0\n",
    "huge_int_literal": "x = " + "9" * 200_000 + "\n",
}


def _timed(fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - start
    assert elapsed < BOUND_S, f"took {elapsed:.1f}s"
    return value


def _pristine_test() -> str:
    return "def test_x():\n    assert 1 + 1 == 2\n"


# ------------------------------------------------------------------ shared scanners
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_shared_scanner_is_bounded(name: str) -> None:
    source = CORPUS[name]
    every = list(antihack.SCANNERS)  # one parse per call, every scanner over it
    for findings in (
        _timed(lambda: antihack.scan_test_changes(_pristine_test(), source, "t.py", kinds=every)),
        _timed(lambda: antihack.scan_source(source, "m.py", "x = 1\n", kinds=every)),
    ):
        assert isinstance(findings, list)
        assert all(isinstance(f, HackFinding) for f in findings)
    patch = _timed(
        lambda: antihack.scan_patch(
            {"t.py": _pristine_test(), "m.py": "x = 1\n"},
            {"t.py": source, "m.py": source},
            ["t.py"],
        )
    )
    assert isinstance(patch, list)


@pytest.mark.parametrize(
    "name",
    ["nested_parentheses", "literal_50mb", "million_lines", "deep_binop_chain", "deep_unary"],
)
def test_sources_over_a_limit_are_reported_unverifiable(name: str) -> None:
    findings = antihack.scan_test_changes(_pristine_test(), CORPUS[name], "t.py")
    if name == "nested_parentheses":  # the parser rejects it: a syntax error, not a scan gap
        assert findings == []
    else:
        assert [f.kind for f in findings] == ["unverifiable"], findings


def test_bounded_number_never_computes_huge_values() -> None:
    import ast

    def value(text: str) -> float | None:
        return bounded.number(ast.parse(text, mode="eval").body)

    assert value("60 * 5") == 300.0 and value("-1e-3") == -0.001 and value("2 ** 10") == 1024
    for text in ("9**9**9", "2**2**24", "10**400", "1e308 * 10", "(-8) ** 0.5", "1 // 0"):
        assert _timed(lambda t=text: value(t)) is None


# ------------------------------------------------------------------ family scanners
FAMILIES = [pytest.param(f, id=f.name) for f in families()]


def _task(family: Family) -> Any:
    bank = family.make_task_bank()
    return bank.get(bank.task_ids(1, seed=0)[0])


def _targets(task: Any) -> list[str]:
    """The editable files an adversarial patch replaces: the first source file and,
    where tests are editable, the first test file too."""
    editable = list(task.editable_files)
    tests = [p for p in editable if p in task.visible_test_files]
    sources = [p for p in editable if p not in task.visible_test_files]
    return (sources[:1] + tests[:1]) or editable[:1]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_module_scanner_is_bounded(family: Family) -> None:
    kinds = list(family.module_scanners())
    if not kinds:
        pytest.skip(f"{family.name} registers no module scanners")
    for name, source in CORPUS.items():
        for findings in (
            _timed(
                lambda s=source: antihack.scan_test_changes(
                    _pristine_test(), s, "t.py", kinds=kinds
                )
            ),
            _timed(lambda s=source: antihack.scan_source(s, "m.py", "x = 1\n", kinds=kinds)),
        ):
            assert all(isinstance(f, HackFinding) for f in findings), name


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_scanner_is_bounded(family: Family) -> None:
    scanners = family.patch_scanners()
    if not scanners:
        pytest.skip(f"{family.name} registers no static scanners")
    task = _task(family)
    for name, source in CORPUS.items():
        files = {p: task.files[p] for p in task.editable_files}
        files.update(dict.fromkeys(_targets(task), source))
        for scanner_name, scanner in scanners.items():
            findings = _timed(lambda s=scanner, f=files: s(task, f))
            assert isinstance(findings, list), (scanner_name, name)


# ------------------------------------------------------------------ family graders
@pytest.fixture(scope="module")
def envs() -> Iterator[dict[str, Any]]:
    made: dict[str, Any] = {}
    try:
        for family in families():
            made[family.name] = gym.make(family.env_ids[0], max_steps=1).unwrapped
        yield made
    finally:
        for env in made.values():
            env.close()


@pytest.mark.parametrize("family", FAMILIES)
def test_every_grader_is_bounded_and_never_beats_the_noop(
    family: Family, envs: dict[str, Any]
) -> None:
    env = envs[family.name]
    task = _task(family)
    if not isinstance(env, CodeEnv):  # other families grade action text
        texts = [CORPUS[name][: env.action_space.max_length] for name in sorted(CORPUS)]
        graded = _timed(
            lambda: env.grade_completions(task.task_id, ['{"action": "submit"}', *texts])
        )
        noop_reward = graded[0][0]
        assert all(reward <= noop_reward + 1e-9 for reward, _ in graded[1:])
        return
    workspace = Workspace(task.files, task.editable_files)
    try:
        pristine = {p: task.files[p] for p in task.editable_files}
        names = sorted(CORPUS)
        submissions = [Submission(task=task, files=dict(pristine), workspace=workspace)]
        for name in names:
            files = dict(pristine)
            files.update(dict.fromkeys(_targets(task), CORPUS[name]))
            submissions.append(Submission(task=task, files=files, workspace=workspace))
        start = time.perf_counter()
        breakdowns = grade_many(env.grader, submissions, env.runner)
        elapsed = time.perf_counter() - start
    finally:
        workspace.close()
    assert elapsed < BOUND_S * len(submissions), elapsed
    noop = breakdowns[0]
    for name, breakdown in zip(names, breakdowns[1:], strict=True):
        assert breakdown.total <= noop.total + 1e-9, (name, breakdown.render())
        assert breakdown.score <= noop.score + 1e-9, (name, breakdown.render())
        assert not env.solved(breakdown), name
    over_limit = {"literal_50mb", "million_lines"}
    for name, breakdown in zip(names, breakdowns[1:], strict=True):
        if name in over_limit:
            assert "unverifiable" in breakdown.gates, (name, breakdown.render())
