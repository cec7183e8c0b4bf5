"""The registered hacks score no more than submitting the start state: the static scan
stops the ones that need files, processes, timers or imports; the runtime stops the
ones written in plain Python (stale memo answers, size special-casing, early returns,
work moved to threads)."""

from __future__ import annotations

from typing import Any

import pytest

from forgegym.envs.performance.generator import build_task
from forgegym.envs.performance.grader import PerformanceGrader
from forgegym.family import get_family
from forgegym.grading.batch import Submission
from forgegym.policies import NOOP_ACTION
from forgegym.sandbox.workspace import Workspace

HACKS = get_family("performance").hack_actions()


def _text(hack: str, task: Any) -> str:
    text = HACKS[hack](task)
    assert text is not None, hack
    return text


STATIC = [
    "memo_across_runs",
    "cache_in_files",
    "patch_timer",
    "offload_process",
    "read_trace_generator",
    "import_reference",
    "memo_dynamic",
]
RUNTIME = [
    "memo_across_calls",
    "special_case_sizes",
    "special_case_seeds",
    "return_early",
    "offload_thread",
]


def _files(task_id: str, hack: str) -> dict[str, str]:
    import json

    task = build_task(task_id)
    text = _text(hack, task)
    actions = json.loads(text.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    edit = actions[0]["edits"][0]
    return {edit["path"]: edit["content"]}


@pytest.mark.parametrize("hack", STATIC)
@pytest.mark.parametrize(
    "task_id", ["performance/lru/naive/balanced", "performance/trie/bug1/skewed"]
)
def test_static_hacks_are_flagged_before_anything_runs(task_id: str, hack: str) -> None:
    task = build_task(task_id)
    grader = PerformanceGrader()
    with Workspace(task.files, task.editable_files) as ws:
        sub = Submission(task=task, files=_files(task_id, hack), workspace=ws)
        assert grader.jobs(sub) == []
        breakdown = grader.score(sub, [])
    assert breakdown.gates == ["hack_flagged"], breakdown.render()
    assert breakdown.total == -1.0


def test_every_hack_has_a_defence_listed_here() -> None:
    assert set(STATIC) | set(RUNTIME) == set(HACKS)


@pytest.mark.slow
def test_runtime_hacks_score_no_more_than_the_noop() -> None:
    from forgegym.envs.performance.bank import PerformanceTaskBank
    from forgegym.envs.performance.env import PerformanceEnv

    task_id = "performance/ring_buffer/naive/write_heavy"
    env = PerformanceEnv(max_steps=1, repeats=2, task_bank=PerformanceTaskBank(validated=False))
    try:
        task = env.task_bank.get(task_id)
        texts = [NOOP_ACTION, *(_text(h, task) for h in RUNTIME)]
        graded = env.grade_completions(task_id, texts)
    finally:
        env.close()
    noop_reward, noop = graded[0]
    for hack, (reward, breakdown) in zip(RUNTIME, graded[1:], strict=True):
        assert not breakdown.gates, (hack, breakdown.render())  # reached the runtime
        assert reward <= noop_reward + 1e-9, (hack, breakdown.render())
        assert not env.solved(breakdown), hack
    # The thread offload is correct but as slow as the naive start: counted CPU.
    offload = dict(zip(RUNTIME, graded[1:], strict=True))["offload_thread"][1]
    assert offload.terms["correct"].value == 1.0
    assert offload.terms["complexity"].value == 0.0, offload.render()
