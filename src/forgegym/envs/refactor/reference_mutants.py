"""Mutants of the *reference refactoring*: does a correct refactor with one subtle
behaviour change applied to it still pass the hidden checks? (issue #37)

:func:`~forgegym.envs.refactor.adequacy.measure` mutates the original module and runs
the original's paths. A candidate, though, is a refactoring: its code is shaped like the
reference (a class behind the old functions, helpers with their own guards and tables),
and a behaviour change there (a boundary, a constant, an ordering) only shows through
the refactored paths. Here every independent-operator mutant
(:mod:`forgegym.tasklib.operators`) of every refactored Python file of the reference is
run in the sandbox on

* the task's hidden checks (the kind's own and the adequacy checks, as grading runs
  them, against the original's expected outcomes): the mutant is *killed* when a step
  differs;
* a fuzzing set much larger than the checks (:func:`.adequacy.adequacy_sequences` with
  ``fuzz=True``, replayed through every refactored path, and the kind's oracle): the
  mutant is *detectable* when it differs there from the unmutated reference (run twice;
  steps that differ between the two runs are ignored). A mutant neither killed nor
  detectable is likely equivalent and left out of the rate.

A detectable mutant that the hidden checks miss would reach success (behaviour is the
only term it changes). Records are split in two halves by a hash of task and mutant.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.core.task import Task
from forgegym.envs.refactor.adequacy import ADEQUACY_SEED, _workdir, adequacy_sequences
from forgegym.envs.refactor.adequacy_checks import merged_checks
from forgegym.envs.refactor.checking import (
    BUDGET_HOOK,
    check_job,
    outcome_matches,
    step_verdicts,
)
from forgegym.envs.refactor.hidden import RefactorHidden
from forgegym.envs.refactor.spec import RefactorSpec
from forgegym.sandbox.jobs import CallJob, CallResult, SetupHook
from forgegym.tasklib import operators

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner

__all__ = [
    "ReferenceMutantRecord",
    "candidate_tree",
    "fuzz_checks",
    "kill_rates_by_kind",
    "measure_reference_mutants",
    "mutable_files",
    "reference_half",
]


@dataclass(frozen=True)
class ReferenceMutantRecord:
    """One mutant of one task's reference refactoring, and what saw it."""

    task_id: str
    kind: str
    path: str
    site: str
    operator: str
    description: str
    half: str
    killed: bool  # by the hidden checks grading runs
    detectable: bool  # by the hidden checks or the fuzzing set


def reference_half(task_id: str, path: str, mutant_source: str) -> str:
    """A mutant's half, fixed by task, file and mutant content (not tunable)."""
    digest = hashlib.sha256(f"{task_id}\0{path}\0{mutant_source}".encode()).digest()
    return "tuning" if digest[0] % 2 == 0 else "held_out"


def candidate_tree(task: Task) -> dict[str, str]:
    """The workspace the reference refactoring leaves: the task's files, the reference's
    written over them, the reference's deletions applied."""
    deleted = set(RefactorHidden.of(task).reference_deleted)
    files = {p: c for p, c in task.files.items() if p not in deleted}
    files.update(task.reference)
    return files


def mutable_files(task: Task) -> list[str]:
    """The reference's Python files (tests excluded): the refactored code."""
    return sorted(
        p for p in task.reference if p.endswith(".py") and not Path(p).name.startswith("test_")
    )


def fuzz_checks(spec: RefactorSpec, *, seed: int = ADEQUACY_SEED) -> list[list[dict[str, Any]]]:
    """The fuzzing set through every refactored path: the much larger adequacy draw and
    the kind's oracle (only the steps' targets and arguments matter: outcomes are
    compared with the unmutated reference's)."""
    drawn = adequacy_sequences(spec, seed=seed, fuzz=True)
    # The oracle's steps name the original's targets; replayed like the draws.
    drawn += [[{"o": st["t"], "a": st["a"]} for st in seq] for seq in spec.oracle]
    placeholder: list[list[dict[str, Any]]] = [[{} for _ in seq] for seq in drawn]
    checks, _ = merged_checks(spec, [], [], {"sequences": drawn, "outcomes": placeholder})
    return [seq for seq in checks if seq]


def _job(directory: Path, sequences: list[list[list[dict[str, Any]]]], timeout_s: float) -> CallJob:
    calls = [check_job(seqs, "/", timeout_s=timeout_s).calls[0] for seqs in sequences]
    return CallJob(
        workdir=str(directory),
        setup_hooks=[SetupHook(target=BUDGET_HOOK)],
        calls=calls,
        timeout_s=min(600.0, timeout_s * len(calls)),
        per_call_timeout_s=timeout_s,
        output_limit_bytes=64_000_000,
    )


def _differs(
    got: list[list[dict[str, Any]]] | None,
    want: list[list[dict[str, Any]]],
    stable: list[list[bool]],
) -> bool:
    if got is None or len(got) != len(want):
        return True
    for row, want_row, ok_row in zip(got, want, stable, strict=True):
        if not isinstance(row, list) or len(row) != len(want_row):
            return True
        for g, w, ok in zip(row, want_row, ok_row, strict=True):
            if ok and not outcome_matches(g, w):
                return True
    return False


def _fuzz_of(result: CallResult, index: int, n: int) -> list[list[dict[str, Any]]] | None:
    outcome = result.outcome(index)
    if outcome.ok and isinstance(outcome.value, list) and len(outcome.value) == n:
        return outcome.value
    return None


def measure_reference_mutants(
    tasks: Sequence[Task],
    specs: Mapping[str, RefactorSpec],
    runner: Runner,
    *,
    timeout_s: float = 30.0,
    log: Callable[[str], Any] = lambda _: None,
) -> list[ReferenceMutantRecord]:
    """Every independent-operator mutant of each task's reference refactoring against
    the task's hidden checks and the fuzzing set (see the module docstring).
    ``specs`` maps each task's id to its spec (for the fuzzing set)."""
    plans: list[tuple[Task, list[list[dict[str, Any]]], list[tuple[str, operators.Mutant]]]] = []
    for task in tasks:
        fuzz = fuzz_checks(specs[task.task_id])
        found = [
            (path, mutant)
            for path in mutable_files(task)
            for mutant in operators.mutants(task.reference[path])
        ]
        plans.append((task, fuzz, found))
    log(f"{sum(len(p[2]) for p in plans)} mutants of {len(plans)} reference refactorings")
    jobs: list[CallJob] = []
    owners: list[tuple[int, int | None]] = []
    dirs: list[Path] = []
    try:
        for index, (task, fuzz, found) in enumerate(plans):
            hidden = RefactorHidden.of(task)
            tree = candidate_tree(task)
            directory = _workdir(tree)
            dirs.append(directory)
            jobs.append(_job(directory, [hidden.checks, fuzz, fuzz], timeout_s))
            owners.append((index, None))
            for number, (path, mutant) in enumerate(found):
                directory = _workdir({**tree, path: mutant.source})
                dirs.append(directory)
                jobs.append(_job(directory, [hidden.checks, fuzz], timeout_s))
                owners.append((index, number))
        results = runner.run_many(jobs)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    baselines: dict[int, tuple[list[list[dict[str, Any]]], list[list[bool]]]] = {}
    for (index, m_index), result in zip(owners, results, strict=True):
        if m_index is not None:
            continue
        assert isinstance(result, CallResult)
        task, fuzz, _ = plans[index]
        hidden = RefactorHidden.of(task)
        verdicts = step_verdicts(hidden.checks, hidden.expected, result)
        first, second = _fuzz_of(result, 1, len(fuzz)), _fuzz_of(result, 2, len(fuzz))
        if not all(ok for ok, _ in verdicts) or first is None or second is None:
            log(f"{task.task_id}: the reference itself fails its checks or the fuzzing set")
            continue
        stable = [
            [outcome_matches(a, b) for a, b in zip(ra, rb, strict=True)]
            for ra, rb in zip(first, second, strict=True)
        ]
        baselines[index] = (first, stable)
    records: list[ReferenceMutantRecord] = []
    for (index, m_index), result in zip(owners, results, strict=True):
        if m_index is None or index not in baselines:
            continue
        assert isinstance(result, CallResult)
        task, fuzz, found = plans[index]
        path, mutant = found[m_index]
        hidden = RefactorHidden.of(task)
        killed = not all(ok for ok, _ in step_verdicts(hidden.checks, hidden.expected, result))
        want, stable = baselines[index]
        detectable = killed or _differs(_fuzz_of(result, 1, len(fuzz)), want, stable)
        records.append(
            ReferenceMutantRecord(
                task_id=task.task_id,
                kind=task.task_id.split("/")[1],
                path=path,
                site=mutant.site.label(),
                operator=mutant.site.operator,
                description=mutant.description,
                half=reference_half(task.task_id, path, mutant.source),
                killed=killed,
                detectable=detectable,
            )
        )
    return records


def kill_rates_by_kind(
    records: Sequence[ReferenceMutantRecord],
) -> dict[str, dict[str, dict[str, float | int]]]:
    """Per kind and half: mutants, detectable ones, killed ones, the kill rate, and the
    tasks with a detectable mutant the checks miss (those reach success)."""
    out: dict[str, dict[str, dict[str, float | int]]] = {}
    for kind in sorted({r.kind for r in records}):
        out[kind] = {}
        for half in ("tuning", "held_out"):
            mine = [r for r in records if r.kind == kind and r.half == half]
            detectable = [r for r in mine if r.detectable]
            killed = sum(r.killed for r in detectable)
            out[kind][half] = {
                "tasks": len({r.task_id for r in mine}),
                "mutants": len(mine),
                "detectable": len(detectable),
                "killed": killed,
                "kill_rate": killed / len(detectable) if detectable else 1.0,
                "tasks_with_survivor": len({r.task_id for r in detectable if not r.killed}),
            }
    return out
