"""The Refactor parent's static analysis and lint in a trusted worker process: the
worker answers what the parent computes, optimised batches use it, and a failing
worker falls back to the parent with the same rewards."""

from __future__ import annotations

import json
from concurrent.futures import Future
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.envs.refactor import grader as grader_module
from forgegym.envs.refactor import offload
from forgegym.envs.refactor.grader import RefactorGrader
from forgegym.envs.refactor.hacks import HACKS
from forgegym.envs.refactor.policies import reference_action, reference_files
from forgegym.envs.refactor.static import analyse, lint_credit
from forgegym.policies import NOOP_ACTION


@pytest.fixture(scope="module")
def env() -> Any:
    made = gym.make("Forge/Refactor-v0", max_steps=1).unwrapped
    yield made
    made.close()


def _request(env: Any, files: dict[str, str]) -> dict[str, Any]:
    from forgegym.grading.batch import Submission

    task = env.task_bank.get(env.task_bank.task_ids(1, seed=3)[0])
    sub = Submission(task=task, files=files, workspace=None)  # type: ignore[arg-type]
    return RefactorGrader()._request(sub)


def test_the_worker_answers_what_the_parent_computes(env: Any) -> None:
    task = env.task_bank.get(env.task_bank.task_ids(1, seed=3)[0])
    starting = {p: task.files[p] for p in task.editable_files}
    written, deleted = reference_files(task)
    refactored = {p: c for p, c in starting.items() if p not in deleted}
    refactored.update(written)
    broken = {**starting, task.editable_files[0]: "def (:\n"}
    worker = offload.shared_worker()
    assert worker is not None and worker.alive
    requests = [_request(env, files) for files in (starting, refactored, broken)]
    answers = [worker.submit(request) for request in requests]  # pipelined, in order
    for request, answer in zip(requests, answers, strict=True):
        mine = json.loads(json.dumps(analyse(request)))  # JSON-plain, floats exact
        assert answer.result(timeout=60) == mine
    got = [a.result() for a in answers]
    lint = {"lint": {"starting": starting, "files": refactored}}
    assert worker.submit(lint).result(timeout=60) == lint_credit(starting, refactored)
    assert got[0]["gates"] == [] and got[0]["structure"][0] == 0.0  # no-op: no structure
    assert got[1]["gates"] == [] and got[1]["structure"][0] == 1.0 and got[1]["api"][0] == 1.0
    assert got[2]["gates"] == ["compile_error"] and "present" not in got[2]


def _items(env: Any) -> list[tuple[str, str]]:
    items = []
    for task_id in env.task_bank.task_ids(2, seed=4):
        task = env.task_bank.get(task_id)
        ref = reference_action(task)
        hack = HACKS["module_getattr"](task)
        items += [(task_id, c) for c in (ref, NOOP_ACTION, ref, hack, "not an action")]
    return items


def test_optimised_batches_use_the_worker_and_a_failing_one_changes_nothing(
    env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = _items(env)
    asked: list[dict[str, Any]] = []
    real = offload.shared_worker

    class Counting:
        def __init__(self, key: str) -> None:
            self.key = key

        def submit(self, request: dict[str, Any]) -> Future[dict[str, Any]]:
            asked.append(request)
            worker = real(self.key)
            assert worker is not None
            return worker.submit(request)

    monkeypatch.setattr(grader_module, "shared_worker", Counting)
    with_worker = env.grade_batch(items)
    # Every distinct submission was analysed by the worker: per task the reference, the
    # no-op, the hack and the unparseable completion (no edits, but a parse error); all
    # but the (gated) hack were linted there too.
    assert len([r for r in asked if "lint" not in r]) == 2 * 4
    assert len([r for r in asked if "lint" in r]) == 2 * 3

    class Failing:
        def __init__(self, key: str) -> None:
            pass

        def submit(self, request: dict[str, Any]) -> Future[dict[str, Any]]:
            future: Future[dict[str, Any]] = Future()
            future.set_exception(RuntimeError("worker gone"))
            return future

    monkeypatch.setattr(grader_module, "shared_worker", Failing)
    fallback = env.grade_batch(items)
    monkeypatch.setattr(RefactorGrader, "offload", False)
    parent_only = env.grade_batch(items)
    for a, b, c in zip(with_worker, fallback, parent_only, strict=True):
        assert a[0] == b[0] == c[0]
        assert a[1].model_dump() == b[1].model_dump() == c[1].model_dump()
    rewards = [r for r, _ in with_worker]
    assert rewards[0] > rewards[1] > rewards[3]  # reference > no-op > hack (gated)


def test_a_task_always_goes_to_the_same_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offload, "worker_count", lambda: 3)
    keys = [f"refactor/rename/m{i}/d1v0" for i in range(12)]
    try:
        workers = [offload.shared_worker(key) for key in keys]
        assert all(w is not None and w.alive for w in workers)
        assert [offload.shared_worker(key) for key in keys] == workers  # stable routing
        assert len({id(w) for w in workers}) == 3  # spread over every worker
    finally:
        with offload._SHARED_LOCK:
            extra = {slot: w for slot, w in offload._SHARED.items() if slot != 0}
            for slot in extra:
                del offload._SHARED[slot]
        for worker in extra.values():
            worker.close()


def test_a_worker_that_stops_answering_costs_one_timeout_per_batch(
    env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung worker is abandoned at its first timeout: every answer it owes fails at
    once, so the batch does not wait a timeout per submission, and the parent's
    rewards are the ones given."""
    items = _items(env)
    owed: list[Future[dict[str, Any]]] = []
    abandoned: list[int] = []

    class Hanging:
        def __init__(self, key: str) -> None:
            pass

        def submit(self, request: dict[str, Any]) -> Future[dict[str, Any]]:
            future: Future[dict[str, Any]] = Future()  # never answered
            owed.append(future)
            return future

        def abandon(self) -> None:
            abandoned.append(1)
            for future in owed:
                if not future.done():
                    future.set_exception(RuntimeError("abandoned"))

    monkeypatch.setattr(grader_module, "OFFLOAD_TIMEOUT_S", 0.2)
    monkeypatch.setattr(grader_module, "shared_worker", Hanging)
    hung = env.grade_batch(items)
    assert len(owed) == 2 * 4 and len(abandoned) == 1  # one timeout for the batch
    monkeypatch.setattr(RefactorGrader, "offload", False)
    parent_only = env.grade_batch(items)
    for a, b in zip(hung, parent_only, strict=True):
        assert a[0] == b[0] and a[1].model_dump() == b[1].model_dump()


def test_abandoning_a_real_worker_fails_what_it_owes_and_a_new_one_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(offload, "_starts", 0)  # other tests' starts count against the cap
    worker = offload.shared_worker("abandon-me")
    assert worker is not None and worker.alive
    owed: Future[dict[str, Any]] = Future()
    with worker._lock:  # an answer it owes but will never give
        worker._pending[-1] = owed
    worker.abandon()
    with pytest.raises(RuntimeError, match="did not answer in time"):
        owed.result(timeout=5)
    assert not worker.alive and worker.proc.wait(timeout=5) != 0
    fresh = offload.shared_worker("abandon-me")
    assert fresh is not None and fresh is not worker and fresh.alive
