"""Batch grading: a family's grader turns submissions into runner jobs and results
into a :class:`~forgegym.rewards.RewardBreakdown`.

Splitting grading into ``jobs`` and ``score`` is what lets a GRPO group of 8-16
completions be graded with one ``run_many`` call that keeps every core busy, instead
of a loop of blocking runs.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from forgegym.core.task import Task
from forgegym.grading.phases import add, phase
from forgegym.sandbox.jobs import Job, Result

if TYPE_CHECKING:
    from forgegym.rewards import RewardBreakdown
    from forgegym.sandbox.runners import Runner
    from forgegym.sandbox.workspace import Workspace

__all__ = ["Grader", "Note", "StagedGrader", "Submission", "grade_many", "submission_key"]

#: Most follow-up rounds :func:`grade_many` runs for a :class:`StagedGrader`.
MAX_ROUNDS = 4

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Note:
    """A recorded ``plan`` / ``review`` / ``reflect`` action."""

    kind: str
    text: str


@dataclass
class Submission:
    """The state a grader scores: the final editable files plus the episode's record."""

    task: Task
    #: The agent's files: editable files still present, plus files it created.
    files: dict[str, str]
    workspace: Workspace
    #: Editable files the agent deleted or moved away (tasks with ``creatable`` only).
    deleted: tuple[str, ...] = ()
    notes: list[Note] = field(default_factory=list)
    #: The last / every structured claim the family's actions carried (e.g.
    #: FlakyRepair's ``Diagnosis``); ``None`` / empty for families without one.
    diagnosis: Any = None
    diagnoses: list[Any] = field(default_factory=list)
    steps_used: int = 0
    max_steps: int = 1
    parse_errors: int = 0
    #: Directories created for this submission's jobs, removed after scoring.
    scratch: list[Path] = field(default_factory=list)
    #: What a grader's ``jobs`` computed for its ``score`` (static scans, pending lint),
    #: kept on the submission so nothing outlives it.
    grading_state: dict[str, Any] = field(default_factory=dict)

    def materialise(self, extra_files: dict[str, str] | None = None) -> Path:
        """A grading copy of this submission (pristine non-editable files restored)."""
        with phase("scratch"):
            directory = self.workspace.materialise(self.files, extra_files, deleted=self.deleted)
        self.scratch.append(directory)
        return directory

    def materialise_pristine(self) -> Path:
        """A grading copy of the task as it started: nothing of this submission."""
        with phase("scratch"):
            directory = self.workspace.materialise({})
        self.scratch.append(directory)
        return directory

    def cleanup(self) -> None:
        with phase("scratch"):
            for directory in self.scratch:
                self.workspace.discard(directory)
            self.scratch.clear()


class Grader(Protocol):
    """What every code family implements for final grading."""

    def jobs(self, submission: Submission) -> list[Job]:
        """The runner jobs needed to score ``submission`` (may be empty)."""
        ...

    def score(self, submission: Submission, results: Sequence[Result]) -> RewardBreakdown:
        """Score ``submission`` from the results of its jobs (same order)."""
        ...

    # A grader holding resources (threads, caches) may also define ``close()``;
    # ``CodeEnv.close`` calls it when present. A grader may define
    # ``prepare(submissions)`` for batch work before ``jobs`` (optimised ``grade_many``
    # calls it once per batch, e.g. one ruff run for every submission); ``jobs`` and
    # ``score`` must give the same results with or without it.
    #
    # Two more optional hooks let the optimised ``grade_many`` run fewer jobs for the
    # same breakdowns (the reference path ignores them):
    # ``execution_key(submission) -> str | None``: a hash of everything ``jobs`` reads
    # (and of everything its jobs execute); submissions with one key share the jobs and
    # results of the first (``jobs`` runs once, its ``grading_state`` is copied), and
    # each is still scored on its own (its claims, notes and steps).
    # ``cutoff(submission, result) -> bool``: ``result`` (one job's) makes every later
    # job of the submission irrelevant: ``score`` on the results up to and including
    # the first such result equals ``score`` on all of them. Later jobs not yet
    # started are cancelled.
    # A :class:`~forgegym.grading.code_grader.CodeGrader` derives both from typed steps:
    # ``shares_runs`` (the key of its task, files and deletions) and ``result_gate``.


class StagedGrader(Grader, Protocol):
    """A grader whose later jobs depend on earlier results (e.g. measure speed only once
    the hidden correctness checks passed: a wrong submission's measurement cannot
    change its score, so running it only burns CPU).

    :func:`grade_many` runs every submission's ``jobs``, then asks ``more_jobs`` with
    that submission's results so far and runs the follow-ups (in one batch per round on
    the reference path, as soon as the submission's results are collected on the
    optimised one), asking again only after a non-empty round (at most
    :data:`MAX_ROUNDS`), and finally calls ``score`` with all of the submission's
    results in order. Every :class:`~forgegym.grading.code_grader.CodeGrader` is one (its
    follow-up stage is :meth:`~forgegym.grading.code_grader.CodeGrader.follow_up_jobs`).
    """

    def more_jobs(self, submission: Submission, results: Sequence[Result]) -> list[Job]:
        """Jobs to run after ``results`` (this submission's so far); ``[]`` when done."""
        ...


def grade_many(
    grader: Grader,
    submissions: Sequence[Submission],
    runner: Runner | None = None,
    *,
    optimised: bool = False,
) -> list[RewardBreakdown]:
    """Grade many submissions over the runner's pool.

    Never raises on a submission: a grader that fails on one (a bug, or model text
    beyond what a scan could bound) gives that submission the ``unverifiable`` gate
    with the error in its notes, and the others are graded normally.

    Every path runs a :class:`StagedGrader`'s follow-ups the same way: after a
    submission's round of jobs, ``more_jobs`` is asked with its results so far, until it
    returns ``[]`` (asked again only for submissions that got follow-ups) or after
    :data:`MAX_ROUNDS` follow-up rounds, in round order, then submission order.

    ``optimised=False`` is the reference path: every submission is prepared in turn,
    all jobs go to one ``run_many`` per round, then every submission is scored, without
    the parser caches of :mod:`forgegym.rewards.bounded`. ``optimised=True`` gives the
    same breakdowns with less work and more overlap:

    * identical submissions (same task, files, deletions, notes, claims, step counts
      and parse errors: :func:`submission_key`) are graded once;
    * submissions that differ only in what the jobs do not read (a grader's optional
      ``execution_key``: e.g. FlakyRepair completions with one patch and different
      diagnoses, or no-ops) share one run of the jobs, each scored on its own;
    * a grader's optional ``cutoff`` ends a submission's jobs early where a result makes
      the later ones irrelevant to its score (FlakyRepair: a refused run gates; no
      follow-ups are asked after it);
    * a grader's optional ``prepare(submissions)`` does batch work first (Bugfix: one
      ruff run for the whole batch);
    * each submission's jobs start in the pool as soon as they are prepared, so the
      parent's static scans of the next submission overlap the sandbox runs of the
      previous ones; results are collected in submission order, and a submission's
      follow-ups start as soon as its results are collected, while later submissions'
      rounds still run (no barrier between rounds); submissions are scored in order,
      each as soon as its results are complete. (A runner with its own ``run_many``,
      e.g. Ray, gets one ``run_many`` per round.)
    """
    from forgegym.sandbox.runners import get_default_runner

    runner = runner or get_default_runner()
    if not optimised:
        from forgegym.rewards import bounded

        with bounded.uncached():
            return _grade_reference(grader, submissions, runner)
    keys = [submission_key(s) for s in submissions]
    first: dict[str, int] = {}
    unique: list[Submission] = []
    for submission, key in zip(submissions, keys, strict=True):
        if key not in first:
            first[key] = len(unique)
            unique.append(submission)
    try:
        prepare = getattr(grader, "prepare", None)
        if callable(prepare):
            try:
                prepare(unique)
            except Exception as exc:  # noqa: BLE001 - jobs() redoes what is missing
                logger.warning("grader prepare failed: %r", exc, exc_info=exc)
        graded = _grade_streaming(grader, unique, runner)
    finally:
        with phase("scratch"):
            for submission in submissions:
                submission.cleanup()
    # Breakdowns are frozen models: duplicates may share one.
    return [graded[first[key]] for key in keys]


def _grade_reference(
    grader: Grader, submissions: Sequence[Submission], runner: Runner
) -> list[RewardBreakdown]:
    """Jobs of every submission in turn, one ``run_many`` per round, then scores."""
    # Per submission: its results so far, or a failure note (unverifiable).
    state: list[list[Result] | str] = []
    try:
        pending: list[tuple[int, list[Job]]] = []
        for index, submission in enumerate(submissions):
            state.append([])
            try:
                with phase("scans"):
                    pending.append((index, grader.jobs(submission)))
            except Exception as exc:  # noqa: BLE001 - one bad submission must not end a run
                state[index] = _failure("jobs", exc)
        more = getattr(grader, "more_jobs", None)
        for round_ in range(MAX_ROUNDS + 1):
            _run_round(runner, pending, state)
            if more is None or round_ == MAX_ROUNDS:
                break
            # Asked: every submission after its first round (even one without jobs),
            # then only those whose follow-ups just ran.
            asking, pending = [index for index, _ in pending], []
            for index in asking:
                done = state[index]
                if isinstance(done, str):
                    continue
                try:
                    jobs = more(submissions[index], list(done))
                except Exception as exc:  # noqa: BLE001
                    state[index] = _failure("more_jobs", exc)
                    continue
                if jobs:
                    pending.append((index, jobs))
            if not pending:
                break
        breakdowns = []
        for submission, done in zip(submissions, state, strict=True):
            if isinstance(done, str):
                breakdowns.append(_unverifiable(done))
                continue
            breakdowns.append(_score(grader, submission, done))
        return breakdowns
    finally:
        with phase("scratch"):
            for submission in submissions:
                submission.cleanup()


def _grade_streaming(
    grader: Grader, submissions: Sequence[Submission], runner: Runner
) -> list[RewardBreakdown]:
    """Prepare each submission and start its jobs at once; per round, collect each
    one's results in submission order and start its follow-ups at once (so
    ``more_jobs`` is asked in the reference path's order, without a barrier between
    rounds); score in order, each as soon as its results are complete.

    Submissions with one ``execution_key`` share the first one's jobs, follow-ups
    included (one run); a ``cutoff`` result cancels the submission's later jobs that
    have not started, and ends its grading (no follow-ups)."""
    return _StreamingGrading(grader, submissions, runner).run()


class _StreamingGrading:
    """One batch on the optimised path (:func:`_grade_streaming`): the state shared by
    its stages (which submission shares whose jobs, the results so far, the breakdowns
    scored in order) and the stages themselves."""

    def __init__(self, grader: Grader, submissions: Sequence[Submission], runner: Runner):
        from forgegym.sandbox.runners import Runner as BaseRunner

        self.grader = grader
        self.submissions = submissions
        self.runner = runner
        self.key_of = getattr(grader, "execution_key", None)
        cut = getattr(grader, "cutoff", None)
        self.cutoff = cut if callable(cut) else None
        self.more = getattr(grader, "more_jobs", None)
        self.failed: dict[int, str] = {}  # index -> failure note (unverifiable)
        self.owners: list[int] = []  # index -> the index whose jobs' results it is scored on
        self.leaders: dict[str, int] = {}
        self.results: dict[int, list[Result]] = {}  # owner -> its results so far
        self.complete: set[int] = set()  # owners whose results are final
        self.breakdowns: list[RewardBreakdown] = []
        self.unread: list[Future[Result]] = []  # jobs past a cutoff
        batched = type(runner).run_many is not BaseRunner.run_many  # the runner batches itself
        self.pool = (
            None
            if batched
            else ThreadPoolExecutor(max_workers=runner.workers, thread_name_prefix="fg-grade")
        )
        self.launcher = None if self.pool is None else _Launcher(self.pool, runner, self.cutoff)

    def prepare(self, index: int, submission: Submission) -> list[Job] | None:
        """Jobs of ``submission``, or ``None`` when it runs none of its own (it shares
        its leader's, or ``jobs`` failed)."""
        key = None
        if callable(self.key_of):
            try:
                key = self.key_of(submission)
            except Exception as exc:  # noqa: BLE001 - then it is simply not shared
                logger.warning("execution_key failed: %r", exc, exc_info=exc)
        leader = self.leaders.get(key) if key is not None else None
        if leader is not None:
            # Same jobs as the leader's: its static work and results are this one's.
            submission.grading_state.update(self.submissions[leader].grading_state)
            self.owners.append(leader)
            return None
        self.owners.append(index)
        try:
            with phase("scans"):
                jobs = self.grader.jobs(submission)
        except Exception as exc:  # noqa: BLE001
            self.failed[index] = _failure("jobs", exc)
            return None
        if key is not None:
            self.leaders[key] = index
        self.results[index] = []
        return jobs

    def start(self, pending: dict[int, list[Job]]) -> dict[int, list[Future[Result]]]:
        """Start the jobs of each owner in ``pending`` (one ``run_many`` when batched)."""
        if self.launcher is not None:
            slots = {
                i: self.launcher.start(self.submissions[i], jobs) for i, jobs in pending.items()
            }
            self.launcher.flush()
            return {index: _filled(slot) for index, slot in slots.items()}
        batch = [job for jobs in pending.values() for job in jobs]
        with phase("sandbox"):
            ran = iter(self.runner.run_many(batch) if batch else [])
        started: dict[int, list[Future[Result]]] = {}
        for index, jobs in pending.items():
            started[index] = []
            for _ in jobs:
                future: Future[Result] = Future()
                future.set_result(next(ran))
                started[index].append(future)
        return started

    def collect(self, index: int, futures: list[Future[Result]]) -> bool:
        """Append the owner's round results, in order, up to and including the first
        deciding one (the later jobs may have been cancelled, and cannot change the
        score); whether one decided."""
        got: list[Result] = []
        decided = False
        with phase("sandbox"):
            for future in futures:
                result = future.result()
                got.append(result)
                if self.cutoff is not None and _decides(
                    self.cutoff, self.submissions[index], result
                ):
                    decided = True
                    break
        self.unread.extend(futures[len(got) :])
        add("sandbox_cpu", sum(getattr(r, "cpu_s", 0.0) for r in got))
        self.results[index].extend(got)
        return decided

    def score_ready(self) -> None:
        """Score, in order, every submission whose owner's results are final."""
        breakdowns = self.breakdowns
        while len(breakdowns) < len(self.owners):
            owner = self.owners[len(breakdowns)]
            if owner in self.failed:
                breakdowns.append(_unverifiable(self.failed[owner]))
            elif owner in self.complete:
                submission = self.submissions[len(breakdowns)]
                breakdowns.append(_score(self.grader, submission, list(self.results[owner])))
            else:
                return

    def start_first_round(self) -> dict[int, list[Future[Result]]]:
        """Prepare every submission and start the jobs of those that run their own."""
        launcher = self.launcher
        pending: dict[int, list[Job]] = {}
        first: dict[int, _Slots] = {}
        for index, submission in enumerate(self.submissions):
            jobs = self.prepare(index, submission)
            if jobs is not None:
                if launcher is None:
                    pending[index] = jobs
                else:  # the first hash seed's jobs start now, the others grouped below
                    first[index] = launcher.start(submission, jobs)
        if launcher is None:
            return self.start(pending)
        launcher.flush()
        return {index: _filled(slot) for index, slot in first.items()}

    def run(self) -> list[RewardBreakdown]:
        """Every round: collect each owner's results in order, start its follow-ups or
        score it; then the breakdowns, in submission order."""
        pool = self.pool
        try:
            running = self.start_first_round()
            for round_ in range(MAX_ROUNDS + 1):
                following: dict[int, list[Job]] = {}
                started: dict[int, list[Future[Result]]] = {}
                for index, futures in running.items():
                    decided = self.collect(index, futures)
                    jobs = []
                    if not decided and self.more is not None and round_ < MAX_ROUNDS:
                        try:
                            jobs = list(
                                self.more(self.submissions[index], list(self.results[index]))
                            )
                        except Exception as exc:  # noqa: BLE001
                            self.failed[index] = _failure("more_jobs", exc)
                    if jobs:
                        if pool is None:
                            following[index] = jobs
                        else:
                            started.update(self.start({index: jobs}))
                    else:
                        self.complete.add(index)
                        self.score_ready()
                running = (
                    started if pool is not None else self.start(following) if following else {}
                )
                if not running:
                    break
            self.score_ready()  # those no round reached (every jobs() failed)
            return self.breakdowns
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            # Jobs past a cutoff that had started still cost sandbox CPU: count it.
            add(
                "sandbox_cpu",
                sum(
                    getattr(f.result(), "cpu_s", 0.0)
                    for f in self.unread
                    if f.done() and not f.cancelled() and f.exception() is None
                ),
            )


def _decides(cutoff: Callable[[Submission, Result], bool], sub: Submission, res: Result) -> bool:
    try:
        return bool(cutoff(sub, res))
    except Exception:  # noqa: BLE001 - a failing cutoff decides nothing
        return False


class _Launcher:
    """Starts submissions' jobs in the pool as they are prepared.

    Jobs with the batch's first hash seed start at once; jobs of other seeds
    (FlakyRepair's repository mode varies ``PYTHONHASHSEED`` per rerun) wait for
    :meth:`flush` and then start grouped by seed, as ``Runner.run_many`` orders them: a
    warm zygote serves one seed, so interleaved seeds would restart interpreters. With
    ``cutoff``, a deciding result cancels the later jobs of its list that have not
    started, and keeps those still waiting from starting."""

    def __init__(self, pool: ThreadPoolExecutor, runner: Runner, cutoff: Any) -> None:
        self.pool, self.runner, self.cutoff = pool, runner, cutoff
        self.waiting: list[tuple[_Slots, Submission, int, Job]] = []
        self.first_seed: list[int | None] = []
        self.lock = threading.Lock()

    def start(self, submission: Submission, jobs: Sequence[Job]) -> _Slots:
        """One slot per job, filled when it starts (every slot is filled after
        :meth:`flush`)."""
        slots = _Slots(futures=[None] * len(jobs))
        for position, job in enumerate(jobs):
            seed = getattr(job, "python_hash_seed", None)
            if not self.first_seed:
                self.first_seed.append(seed)
            if seed == self.first_seed[0]:
                self._launch(slots, submission, position, job)
            else:
                self.waiting.append((slots, submission, position, job))
        return slots

    def flush(self) -> None:
        groups: dict[int | None, list[tuple[_Slots, Submission, int, Job]]] = {}
        for item in self.waiting:
            groups.setdefault(getattr(item[3], "python_hash_seed", None), []).append(item)
        self.waiting = []
        for items in groups.values():
            for slots, submission, position, job in items:
                self._launch(slots, submission, position, job)

    def _launch(self, slots: _Slots, submission: Submission, position: int, job: Job) -> None:
        with self.lock:
            if slots.cut is not None and position > slots.cut:
                skipped: Future[Result] = Future()
                skipped.cancel()  # decided by an earlier result: never started
                slots.futures[position] = skipped
                return
        future = self.pool.submit(self.runner.run, job)
        with self.lock:
            slots.futures[position] = future
        if self.cutoff is not None:
            future.add_done_callback(self._watch(slots, submission, position))

    def _watch(self, slots: _Slots, submission: Submission, position: int) -> Any:
        def done(future: Future[Result]) -> None:
            if future.cancelled() or future.exception() is not None:
                return
            if not _decides(self.cutoff, submission, future.result()):
                return
            with self.lock:
                slots.cut = position if slots.cut is None else min(position, slots.cut)
                later = slots.futures[position + 1 :]
            for pending in later:
                if pending is not None:
                    pending.cancel()

        return done


@dataclass
class _Slots:
    """A job list's futures (``None`` until started) and its earliest deciding index."""

    futures: list[Future[Result] | None]
    cut: int | None = None


def _filled(slots: _Slots) -> list[Future[Result]]:
    futures = [future for future in slots.futures if future is not None]
    if len(futures) != len(slots.futures):
        raise RuntimeError("a job was never started")  # flush() starts every waiting job
    return futures


def _score(grader: Grader, submission: Submission, results: list[Result]) -> RewardBreakdown:
    faults = [r.fault for r in results if getattr(r, "fault", None)]
    if faults:
        # The machine failed under a job even after the runner's retry: no verdict on
        # the code at all, so no reward either (never a silent 0 or -1).
        return _unverifiable(f"cannot verify: machine fault ({faults[0]})", cause=faults[0])
    try:
        with phase("compose"):
            return grader.score(submission, results)
    except Exception as exc:  # noqa: BLE001 - one bad submission must not end a run
        return _unverifiable(_failure("score", exc))


def submission_key(submission: Submission) -> str:
    """A content hash of everything a grader reads from ``submission``: task id, files,
    deletions, notes, claims, step counts and parse errors (not its workspace or
    scratch state). Equal keys mean equal breakdowns."""
    payload = {
        "task": submission.task.task_id,
        "files": sorted(submission.files.items()),
        "deleted": list(submission.deleted),
        "notes": [[n.kind, n.text] for n in submission.notes],
        "diagnosis": _claim(submission.diagnosis),
        "diagnoses": [_claim(d) for d in submission.diagnoses],
        "steps": [submission.steps_used, submission.max_steps, submission.parse_errors],
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _claim(claim: Any) -> Any:
    if claim is None:
        return None
    dump = getattr(claim, "model_dump", None)
    return [type(claim).__qualname__, dump(mode="json") if callable(dump) else repr(claim)]


def _run_round(
    runner: Runner, pending: Sequence[tuple[int, list[Job]]], state: list[list[Result] | str]
) -> None:
    """Run every pending submission's jobs in one batch; append each one's results."""
    batch = [job for _, jobs in pending for job in jobs]
    with phase("sandbox"):
        results = runner.run_many(batch) if batch else []
    add("sandbox_cpu", sum(getattr(r, "cpu_s", 0.0) for r in results))
    start = 0
    for index, jobs in pending:
        done = state[index]
        assert not isinstance(done, str)
        done.extend(results[start : start + len(jobs)])
        start += len(jobs)


def _failure(stage: str, exc: BaseException) -> str:
    logger.warning("grading failed in %s: %r", stage, exc, exc_info=exc)
    return f"cannot verify: grading failed in {stage} ({type(exc).__name__}: {exc})"[:500]


def _unverifiable(note: str, cause: str | None = None) -> RewardBreakdown:
    """A breakdown that is no reward: ``valid`` False with the cause (a machine fault or
    a grader bug, never the submission's doing)."""
    from forgegym.rewards import compose

    # A machine fault has its own gate: "unverifiable" alone is also what a submission
    # the parent cannot read earns (the submission's doing, a valid penalty).
    gates = ["machine_fault"] if cause is not None else ["unverifiable"]
    breakdown = compose({}, {}, gates=gates, notes=[note])
    return breakdown.model_copy(update={"valid": False, "invalid_cause": (cause or note)[:500]})
