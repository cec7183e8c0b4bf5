"""One measurement of the throughput bench (:func:`measure`): a batch of completions
(:func:`completions`) graded through the trainer's reward function with its CPU and
phases recorded, in this process or in a fresh one (:func:`measure_fresh`, which runs
this module)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from typing import Any

from forgegym.bench.plain_baseline import measure_plain
from forgegym.bench.process_cpu import grading_pids, rusage_s, tree_cpu
from forgegym.bench.throughput_result import ThroughputRow

__all__ = ["completions", "measure", "measure_fresh", "same_project_warmup"]


def completions(family: Any, env: Any, task_ids: list[str], group: int, mix: str) -> list[str]:
    """``group`` completions per task: half reference, half no-op (``distinct``: each
    with its own leading ``plan`` note)."""
    from forgegym.play.policies import NOOP_ACTION

    reference = family.reference_action()
    names = {m.model_fields["action"].annotation.__args__[0] for m in env.action_set.models}
    out: list[str] = []
    for task_id in task_ids:
        task = env.task_bank.get(task_id)
        ref = reference(task)
        for i in range(group):
            text = ref if i < (group + 1) // 2 else NOOP_ACTION
            if mix == "distinct" and "plan" in names:
                text = _with_plan(text, f"attempt {i}: check the failing case first")
            out.append(text)
    return out


def _with_plan(text: str, note: str) -> str:
    """``text``'s actions with a ``plan`` note first (same edits, a different submission)."""
    from forgegym.core.actions import extract_json

    payload, error = extract_json(text)
    if error is not None:
        return text
    actions = payload if isinstance(payload, list) else [payload]
    return "```json\n" + json.dumps([{"action": "plan", "text": note}, *actions]) + "\n```"


def same_project_warmup(bank: Any, measured: list[str], fallback: list[str]) -> list[str]:
    """Warm-up tasks for a bank of projects (one with ``entry(task_id)["project"]``, the
    real bank): another task of each measured task's project, so every grading process
    has the projects unpacked and their warm code registered before the measured batch
    (steady state: a trainer meets each project once); ``fallback`` otherwise."""
    entry = getattr(bank, "entry", None)
    if not callable(entry):
        return fallback
    chosen: list[str] = []
    taken = set(measured)
    for task_id in measured:
        project = entry(task_id)["project"]
        for other in bank.task_ids(len(bank), seed=len(chosen)):
            if other not in taken and entry(other)["project"] == project:
                chosen.append(other)
                taken.add(other)
                break
    return chosen if len(chosen) == len(measured) else fallback


def measure(
    env_id: str,
    workers: int,
    optimised: bool,
    batch: tuple[list[str], list[str]],
    warm: tuple[list[str], list[str]],
    processes: int = 1,
    env_kwargs: dict[str, Any] | None = None,
    kind: str = "warm",
) -> ThroughputRow:
    """One measurement in this process (``bench_throughput`` runs it in a fresh one).
    ``kind="cold"``: no warm-up (the batch builds its tasks and starts the pool)."""
    import resource

    from forgegym.grading.phases import recording
    from forgegym.integrations.trl import make_reward_funcs
    from forgegym.sandbox.jobs import PytestResult
    from forgegym.sandbox.runners import ForkServerRunner

    if kind == "plain":
        return measure_plain(env_id, workers, batch, env_kwargs)
    kwargs: dict[str, Any] = dict(env_kwargs or {})
    runner = None
    ran: list[Any] = []
    if processes == 1:
        runner = ForkServerRunner(workers=workers)
        kwargs["runner"] = runner
        run = runner.run

        def counted(job: Any) -> Any:
            result = run(job)
            ran.append(result)
            return result

        runner.run = counted  # type: ignore[method-assign]
    if not optimised:
        kwargs["optimised_grading"] = False

    class _Wins:
        """Takes the reward function's per-task outcome reports (a curriculum's role)."""

        def __init__(self) -> None:
            self.wins: list[int] = []

        def record(self, task_id: str, wins: int, total: int) -> None:
            self.wins.append(int(wins))

    outcomes = _Wins()
    try:
        (reward,) = make_reward_funcs(
            env_id,
            curriculum=outcomes,  # type: ignore[arg-type]
            env_kwargs=kwargs,
            log_terms=False,
            grading_processes=processes,
            workers_per_process=max(1, workers // processes),
        )
        start_s = 0.0
        if kind != "cold":
            ids, texts = warm
            reward([""] * len(texts), texts, ids)  # imports, pool start, the family's data
            _build_tasks(env_id, env_kwargs, batch[0])
            if runner is not None:
                began = time.perf_counter()
                runner.warm()  # replaces zygotes older than the tasks' warm code
                start_s = time.perf_counter() - began
        ids, texts = batch
        outcomes.wins.clear()
        ran.clear()
        load = os.getloadavg()[0]
        # The /proc scan (a few ms) brackets the parent's own rusage, not inside it.
        grading = grading_pids() if processes > 1 else frozenset()
        tree0 = tree_cpu(grading)
        kids0 = rusage_s(resource.RUSAGE_CHILDREN)
        self0 = rusage_s(resource.RUSAGE_SELF)
        with recording() as recorder:
            start = time.perf_counter()
            rewards = reward([""] * len(texts), texts, ids)
            wall = time.perf_counter() - start
        self1 = rusage_s(resource.RUSAGE_SELF)
        kids1 = rusage_s(resource.RUSAGE_CHILDREN)
        tree1 = tree_cpu(grading)
        phases = recorder.snapshot()
        reward.close()  # type: ignore[attr-defined]
    finally:
        if runner is not None:
            runner.close()
    return ThroughputRow(
        env_id=env_id,
        workers=workers,
        optimised=optimised,
        completions=len(texts),
        wall_s=wall,
        phases_s=phases,
        parent_cpu_s=self1 - self0,
        children_cpu_s=(kids1 - kids0) + max(0.0, tree1[1] - tree0[1]),
        pool_cpu_s=max(0.0, tree1[2] - tree0[2]),
        grading_cpu_s=max(0.0, tree1[0] - tree0[0]),
        job_cpu_s=phases.get("sandbox_cpu", 0.0),
        # An invalid reward (a machine fault) is None for the trainer: NaN here.
        rewards=[float("nan") if r is None else float(r) for r in rewards],
        wins=list(outcomes.wins),
        load=load,
        processes=processes,
        kind=kind,
        tests_s=sum(
            rec.duration_s for r in ran if isinstance(r, PytestResult) for rec in r.records
        ),
        # pytest runs (a real task's behaviour-check job per distinct patch is not one)
        runs=sum(isinstance(r, PytestResult) for r in ran),
        start_s=start_s,
    )


def _build_tasks(env_id: str, env_kwargs: dict[str, Any] | None, task_ids: list[str]) -> None:
    """Build the batch's tasks once in another env of this process, as a trainer's
    dataset does when it renders the prompts (a real project is then unpacked, its
    dependency environment and its warm test code ready; the reward function's own
    env still builds its tasks inside the measured batch)."""
    from forgegym.integrations.trl import _make_env

    env = _make_env(env_id, env_kwargs, 1).unwrapped
    try:
        for task_id in dict.fromkeys(task_ids):
            env.get_task(task_id)
    finally:
        env.close()


def measure_fresh(
    env_id: str,
    workers: int,
    optimised: bool,
    batch: tuple[list[str], list[str]],
    warm: tuple[list[str], list[str]],
    processes: int = 1,
    env_kwargs: dict[str, Any] | None = None,
    kind: str = "warm",
) -> ThroughputRow:
    """:func:`measure` in a fresh interpreter (no caches of earlier measurements). A
    cold measurement also gets fresh folders for unpacked real projects and their warm
    code (``FORGEGYM_REAL_DIR``): nothing materialised (the sdists and the dependency
    environments stay cached: downloads and installs are not what a batch repeats)."""
    import shutil
    import tempfile

    request = {
        "env_id": env_id,
        "workers": workers,
        "optimised": optimised,
        "batch": batch,
        "warm": warm,
        "processes": processes,
        "env_kwargs": env_kwargs,
        "kind": kind,
    }
    environ = dict(os.environ)
    scratch = tempfile.mkdtemp(prefix="forgegym-cold-") if kind == "cold" else None
    if scratch is not None:
        environ["FORGEGYM_REAL_DIR"] = scratch
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "forgegym.bench.throughput_measure"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
            env=environ,
        )
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("ROW ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"throughput measurement of {env_id} ({workers} workers) failed "
            f"(exit {proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    return ThroughputRow(**json.loads(lines[-1][4:]))


def _child_main() -> None:
    request = json.loads(sys.stdin.read())
    row = measure(
        request["env_id"],
        request["workers"],
        request["optimised"],
        tuple(request["batch"]),  # type: ignore[arg-type]
        tuple(request["warm"]),  # type: ignore[arg-type]
        request.get("processes", 1),
        request.get("env_kwargs"),
        request.get("kind", "warm"),
    )
    print("ROW " + json.dumps(asdict(row)), flush=True)


if __name__ == "__main__":
    _child_main()
