"""FlakyRepair's sandbox runs: the chaos reruns, the ordered and collect-only runs, and
how their results read (which target passed, each rerun's outcome, failure entropy).

Kept apart from :mod:`.grader` so that the repository mode (:mod:`.repo`) and the env
build the same jobs without importing the grader.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from forgegym.envs.flaky.chaos import ChaosRun, make_schedule, order_for
from forgegym.envs.flaky.watching import TargetJudge
from forgegym.sandbox.jobs import (
    CallJob,
    CallResult,
    CallSpec,
    ProjectRun,
    PytestJob,
    PytestResult,
    Result,
    RunStatus,
    SetupHook,
)
from forgegym.tasklib.values import same_call_outcome

__all__ = [
    "HASH_SEED",
    "HOOK",
    "RerunOutcome",
    "chaos_jobs",
    "collect_job",
    "consistency_job",
    "consistency_verdicts",
    "failure_entropy",
    "missing_ids",
    "order_job",
    "rerun_outcomes",
    "target_passed",
]

HOOK = "forgegym.envs.flaky.chaos:apply_chaos"
HASH_SEED = 0  # one zygote family: a per-rerun hash seed would cold-start interpreters


@dataclass(frozen=True)
class RerunOutcome:
    """The target's verdict in one rerun, with what the runner reported."""

    run: ChaosRun
    passed: bool
    status: str
    error_type: str | None
    message: str
    frames: tuple[str, ...]
    duration_s: float


def chaos_jobs(
    workdir: str,
    target: str,
    test_ids: Sequence[str],
    test_paths: Sequence[str],
    schedule: Sequence[ChaosRun],
    timeout_s: float = 10.0,
    options: Mapping[str, Any] | None = None,
) -> list[PytestJob]:
    """One :class:`PytestJob` per rerun of ``schedule`` (its order, env and hook).

    Collected ids are not pinned to ``test_ids``: a test the agent added is collected
    and, in ``file`` mode (the calm rerun), run; :func:`rerun_outcomes` fails a rerun
    whose collection lost one of ``test_ids``. ``options`` (a user's repository, see
    :func:`forgegym.envs.flaky.repo.run_options`): ``conftest`` (load the trusted
    conftest files), ``paths`` (import roots), ``ini`` (pytest ini overrides)."""
    return [
        _pytest_job(workdir, run, order_for(run, target, test_ids), test_paths, timeout_s, options)
        for run in schedule
    ]


def _pytest_job(
    workdir: str,
    run: ChaosRun,
    order: Sequence[str],
    test_paths: Sequence[str],
    timeout_s: float,
    options: Mapping[str, Any] | None,
) -> PytestJob:
    opts = dict(options or {})
    # A repository's measured limit (RepoTaskBank._measure) when it is longer.
    timeout_s = max(timeout_s, float(opts.get("time_limit_s") or 0.0))
    kwargs = run.hook_kwargs()
    if opts.get("paths"):
        kwargs["paths"] = list(opts["paths"])
    return PytestJob(
        workdir=workdir,
        targets=list(test_paths),
        expected_ids=None,
        order=None if run.mode == "file" else list(order),
        env=run.env(),
        python_hash_seed=run.hash_seed if run.extended else HASH_SEED,
        # The generated bank's runs are watched (retries, skipped assertions, chaos
        # tampering: forgegym.sandbox.watch, judged by watching.TargetJudge).
        watch=not run.extended,
        setup_hooks=[SetupHook(target=HOOK, kwargs=kwargs)],
        timeout_s=timeout_s,
        conftest=bool(opts.get("conftest")),
        ini_options=dict(opts.get("ini") or {}),
        # The cached dependency environment (repository mode): bound read-only.
        project=ProjectRun(site_dirs=list(opts["site_dirs"])) if opts.get("site_dirs") else None,
    )


def order_job(
    workdir: str,
    test_ids: Sequence[str],
    test_paths: Sequence[str],
    order: Sequence[str],
    options: Mapping[str, Any] | None = None,
) -> PytestJob:
    """A calm run in an explicit order (order-dependency analysis)."""
    calm = replace(make_schedule(0, 1)[0], mode="order")
    return _pytest_job(workdir, calm, order, test_paths, 10.0, options)


def collect_job(
    workdir: str, test_paths: Sequence[str], options: Mapping[str, Any] | None = None
) -> PytestJob:
    """Collect the test ids of ``test_paths`` (pytest's own node ids), running none."""
    calm = replace(make_schedule(0, 1)[0], mode="order")
    return _pytest_job(workdir, calm, [], test_paths, 30.0, options)


def consistency_job(workdir: str, calls: Sequence[Mapping[str, Any]]) -> CallJob:
    """The calls of a canary's hidden checks (``FlakyHidden.consistency``, ``CallSpec``
    dicts) on the code in ``workdir``: their outcomes go back to the parent, which
    compares them with the pristine code's (:func:`consistency_verdicts`)."""
    return CallJob(
        workdir=workdir,
        calls=[CallSpec.model_validate(c) for c in calls],
        python_hash_seed=HASH_SEED,
    )


def consistency_verdicts(
    calls: Sequence[Mapping[str, Any]], pristine: Result | None, submitted: Result | None
) -> dict[str, bool]:
    """``{check id: passed}`` of a canary's hidden checks: a call passes when the
    submitted code does what the pristine code does (:func:`same_call_outcome`; a call
    the submitted run did not complete fails). The first call is the contradicted one:
    it is no check, and neither is a call whose pristine outcome is the same as its own,
    nor one the pristine run did not report. A missing run fails every check."""
    if not isinstance(pristine, CallResult) or not isinstance(submitted, CallResult):
        return {f"consistency[{i}]": False for i in range(1, len(calls))}
    reported = pristine.outcomes[: len(calls)]
    return {
        f"consistency[{index}]": same_call_outcome(expected, submitted.outcome(index))
        for index, expected in enumerate(reported[1:], start=1)
        if not same_call_outcome(expected, reported[0])
    }


def missing_ids(result: Result, test_ids: Sequence[str]) -> list[str]:
    """The ids of ``test_ids`` a completed run did not collect (renamed or removed)."""
    if not isinstance(result, PytestResult) or result.status is not RunStatus.COMPLETED:
        return []
    collected = set(result.collected_ids)
    return [t for t in test_ids if t not in collected]


def target_passed(
    result: Result, target: str, repeats: int, judge: TargetJudge | None = None
) -> bool:
    """Whether every one of the ``repeats`` runs of ``target`` passed (complete run
    only); with ``judge`` a pass counts only if the watch shows no hack and the test's
    assertions ran."""
    if not isinstance(result, PytestResult) or result.status is not RunStatus.COMPLETED:
        return False
    records = [r for r in result.records if r.nodeid == target]
    if judge is not None:
        verdicts = judge.verdicts(records, target)
        return len(verdicts) == repeats and all(ok for ok, _ in verdicts)
    return len(records) == repeats and all(r.outcome.value == "passed" for r in records)


def rerun_outcomes(
    results: Sequence[Result],
    schedule: Sequence[ChaosRun],
    target: str,
    test_ids: Sequence[str],
    judge: TargetJudge | None = None,
) -> list[RerunOutcome]:
    out = []
    for run, result in zip(schedule, results, strict=True):
        repeats = order_for(run, target, test_ids).count(target)
        passed = target_passed(result, target, repeats, judge)
        error_type, message, duration = None, "", 0.0
        frames: tuple[str, ...] = ()
        lost = missing_ids(result, test_ids)
        if lost:
            passed = False
            error_type, message = "missing_tests", f"tests no longer collected: {lost[:5]}"
        elif isinstance(result, PytestResult):
            bad = [r for r in result.records if r.nodeid == target and r.outcome.value != "passed"]
            duration = sum(r.duration_s for r in result.records if r.nodeid == target)
            why = [w for _, w in (judge.verdicts(result.records, target) if judge else []) if w]
            if bad:
                error_type = bad[0].error_type or bad[0].outcome.value
                message = bad[0].message.strip().splitlines()[0][:200] if bad[0].message else ""
                frames = tuple(f"{f.path}:{f.line}:{f.function}" for f in bad[0].frames)
            elif why:
                error_type, message = "not_counted", why[0][:200]
            elif not passed:
                error_type = result.status.value
                message = (result.detail or result.stderr_tail.strip()[-200:])[:200]
        out.append(
            RerunOutcome(
                run=run,
                passed=passed,
                status=result.status.value,
                error_type=error_type,
                message=message,
                frames=frames,
                duration_s=duration,
            )
        )
    return out


def failure_entropy(outcomes: Sequence[RerunOutcome]) -> float:
    """Normalised Shannon entropy (bits / log2 k) of the rerun outcome types."""
    kinds = Counter("passed" if o.passed else (o.error_type or "failed") for o in outcomes)
    n = sum(kinds.values())
    if n == 0 or len(kinds) < 2:
        return 0.0
    h = -sum(c / n * math.log2(c / n) for c in kinds.values())
    return h / math.log2(min(n, max(2, len(kinds))))
