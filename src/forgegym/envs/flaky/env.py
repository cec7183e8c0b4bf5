"""``Forge/FlakyRepair-v0``: repair a flaky test without weakening it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from forgegym.core.actions import ActionSet, RunTestsAction
from forgegym.core.env import check_positive_int, reject_unknown_kwargs
from forgegym.core.task import Task
from forgegym.envs.code_env import CodeEnv
from forgegym.envs.flaky.actions import ACTIONS
from forgegym.envs.flaky.bank import FlakyTaskBank
from forgegym.envs.flaky.grader import FlakyGrader, PowerReference, solved
from forgegym.envs.flaky.hidden import FlakyHidden
from forgegym.envs.flaky.preflight import Preflight, preflight
from forgegym.envs.flaky.repo import MutantSpec, RepoTaskBank
from forgegym.envs.flaky.runs import RerunOutcome, chaos_jobs, rerun_outcomes, target_passed
from forgegym.envs.flaky.signals import deep_signals
from forgegym.envs.flaky.templates import CATEGORIES
from forgegym.rewards import RewardBreakdown
from forgegym.sandbox.jobs import PytestResult
from forgegym.sandbox.workspace import Workspace
from forgegym.tasklib.project import MAX_FILE_BYTES, MAX_FILES

__all__ = ["FlakyRepairEnv", "RepoTaskBank"]

_EXAMPLE = [
    {
        "action": "edit",
        "edits": [{"path": "pkg/module.py", "search": "old\n", "replace": "new\n"}],
        "diagnosis": {
            "category": "shared_state",
            "location": "pkg/module.py::function",
            "confidence": 0.7,
            "claims": ["a module-level list leaks between tests"],
        },
    },
    {"action": "run_tests"},
]


#: Confirming reruns of a mutant whose only failure looked like the baseline's flakiness,
#: in rounds: one that passes once is dropped (its failure was the race's), one that
#: failed every rerun gets the next round. A harmless mutant of a test that fails one run
#: in two then counts as caught with probability 2**-13 instead of 2**-5 (one grading in
#: five of a correct thread-join fix lost power to such a mutant with a single round of 4).
CONFIRM_ROUNDS: tuple[int, ...] = (4, 8)
CONFIRM_RERUNS = sum(CONFIRM_ROUNDS)

_FLOATS = re.compile(r"assert\s+(-?[\d.]+(?:e-?\d+)?)\s*==\s*(-?[\d.]+(?:e-?\d+)?)")


def _rounding_only(result: Any, target: str) -> bool:
    """The target failed on a mutant only by float rounding (``assert 21.500000000000004
    == 21.5``): the mutant changed nothing a test of that value should pin, so it does
    not count as caught (a fix to ``pytest.approx`` must not lose power over it)."""
    if not isinstance(result, PytestResult):
        return False
    for record in result.records:
        if record.nodeid == target and record.outcome.value != "passed":
            match = _FLOATS.search(record.message or "")
            if match is None:
                return False
            try:
                a, b = float(match.group(1)), float(match.group(2))
            except ValueError:
                return False
            return a != b and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return False


def confirm_in_rounds(
    rerun: Callable[[Sequence[int], int], Sequence[Sequence[bool]]],
    indices: Sequence[int],
    rounds: Sequence[int] = CONFIRM_ROUNDS,
) -> list[list[bool]]:
    """Each of ``indices``' passed flags over the confirming reruns, in ``rounds``
    (``rerun(indices, times)``: each one's flags of ``times`` reruns). A mutant that
    passed once is settled (its failure was the race's); only those that failed every
    rerun so far get the next, longer round, so real catches pay the full count and
    harmless mutants of a racy test usually one round."""
    flags: dict[int, list[bool]] = {i: [] for i in indices}
    pending = list(indices)
    for times in rounds:
        if not pending:
            break
        for i, passed in zip(pending, rerun(pending, times), strict=True):
            flags[i] += list(passed)
        pending = [i for i in pending if not any(flags[i])]
    return [flags[i] for i in indices]


def confirmed_catches(
    failed: Mapping[int, str],
    flaky_kinds: set[str],
    confirm: Callable[[Sequence[int]], Sequence[Sequence[bool]]],
) -> list[int]:
    """The mutants (indices of ``failed``: index -> error type of its failed run) the
    pristine test really caught. One that failed the way the pristine test flakily fails
    anyway (an error type in ``flaky_kinds``, the baseline's) counts only when it fails
    again on every confirming rerun (``confirm(indices)``: each one's passed flags): a
    harmless mutant (``recv(4097)``) "caught" by the race itself is not a bug the fixed
    test must catch, while a mutant that always fails with that error still is."""
    ambiguous = [i for i, kind in failed.items() if kind in flaky_kinds]
    verdicts = confirm(ambiguous) if ambiguous else []
    chance = {i for i, passed in zip(ambiguous, verdicts, strict=True) if any(passed)}
    return [i for i in failed if i not in chance]


class FlakyRepairEnv(CodeEnv):
    """Repair a flaky test so it passes on every chaos rerun, without weakening it.

    ## Description
    Each task is a small package whose test ``target`` is flaky under a seeded chaos
    schedule (test order permutations, running alone or twice in one process, RNG
    seeds driving injected latency/drops/races in local fakes, time zone, locale,
    clock offset). Thirteen root-cause categories: async_wait, concurrency (incl. a
    worker pool under load), test_order_dependency, non_idempotent, resource_leak,
    shared_state, network (in-process fakes), platform_dependency, nondeterminism,
    import_side_effect, module_cache_pollution, fixture_scope_leak, mock_residue.
    Tests are editable; test edits are checked for weakening.

    ## Action space
    Text (any string). A JSON action or list: ``edit`` (with optional ``diagnosis``
    ``{category, location "path::func", confidence, claims}``), ``run_tests`` (runs
    the chaos reruns and reports the pass rate), ``lint``, ``plan``/``review``/
    ``reflect``, ``submit`` (with optional ``diagnosis``).

    ## Observation space
    Text: the task, preflight classification, baseline/current pass rate, run history
    (outcome, error type, short message per rerun), AST deep signals, failure frontier
    (``file:line:function`` of failing frames), order-dependency findings (polluters,
    state-setters), the files, the diff so far and the last reward breakdown.

    ## Rewards
    At the end (submit or truncation): gates first (anti-hack findings against the
    pristine files -> -1.0, below the no-op). Otherwise weighted terms: stability
    (normalised ``p^2 - p0^2`` gain of the chaos pass rate), solved bonus (p = 1.0 with
    power), power (the tests still fail on a bug-injected mutant; a ``power_lost``
    penalty otherwise), proximity of the edit to the ground-truth location or failure
    frontier, failure-type entropy, diagnosis and Brier calibration, diff size,
    regression (tests the agent added run in the calm rerun and must pass too) and
    no-op penalties, repeated-diagnosis penalty, hallucination penalty (a file, line,
    location or symbol the diagnosis names that does not exist). Between steps:
    potential-based shaping ``w (p'^2 - p^2)`` on measured pass rates.

    ## Starting state
    A validated scenario (flaky: 0 < p < 1 under its schedule) or, with
    ``repo_path``/``test_id``, a copy of your repository: ``test_id`` is any id pytest
    collects (``path::Class::test``, ``unittest.TestCase`` methods, ``test_x[1-2]``; an
    unknown one raises ``ValueError`` listing the collected ids); its ``conftest.py``
    and pytest settings as they were are honoured (an added pytest hook is a hack); a
    ``src`` layout imports. Repository reruns add chaos real suites are flaky under
    (ten ``PYTHONHASHSEED`` values, a 1 µs thread switch interval with thread start
    latency, CPU pressure), and power is measured on bug-injected variants of the code
    the test exercises: the repaired test must still catch every one the original
    caught (none caught: no power credit).

    ## Episode end
    Terminated on ``submit``; truncated after ``max_steps`` (graded as submitted).
    ``info["success"]``: pass rate 1.0 under the schedule, no hack flags, power holds.

    ## Arguments
    ``reruns`` (chaos reruns per estimate, default 10), ``schedule_seed`` (``None``:
    each task's own), ``repo_path``/``test_id`` (your repository), ``categories``,
    ``weights`` (term weights), ``order_analysis`` (iPFlakies order findings at
    reset), ``max_file_bytes``/``max_files`` (repository caps), ``test_dependencies``
    (repository mode: requirements or local paths installed once into the cached
    environment, bound read-only into the sandbox; default what the repository
    declares), ``cache_dir`` (default ``$FORGEGYM_CACHE_DIR`` or
    ``~/.cache/forgegym``), ``time_limit_multiple``/``time_limit_cap_s`` (repository
    mode: every rerun's wall limit is this multiple of a calm run of the test file
    measured at make, at least 10 s, at most the cap), plus ``CodeEnv``'s. An unknown keyword is a ``TypeError``
    listing the accepted ones.

    ## Example
    >>> import gymnasium as gym, forgegym  # doctest: +SKIP
    >>> env = gym.make("Forge/FlakyRepair-v0", reruns=10)  # doctest: +SKIP
    >>> obs, info = env.reset(seed=0)  # doctest: +SKIP
    >>> obs, r, term, trunc, info = env.step('{"action": "submit"}')  # doctest: +SKIP
    """

    family: ClassVar[str] = "flaky"
    #: Impossible variants of this family's tasks (``canary/<task id>``).
    canaries: ClassVar[str | None] = "forgegym.envs.flaky.canaries:canary_bank"

    @staticmethod
    def success_predicate(breakdown: RewardBreakdown) -> bool:
        """The family's public success predicate (``info["success"]``)."""
        return solved(breakdown)

    action_set: ClassVar[ActionSet] = ACTIONS
    system_prompt: ClassVar[str] = (
        "You are an expert Python engineer repairing flaky tests. Find the root cause; "
        "never weaken, skip or retry a test."
    )

    def __init__(
        self,
        *,
        reruns: int = 10,
        schedule_seed: int | None = None,
        repo_path: str | None = None,
        test_id: str | None = None,
        categories: Sequence[str] | None = None,
        weights: Mapping[str, float] | None = None,
        order_analysis: bool = True,
        max_file_bytes: int = MAX_FILE_BYTES,
        max_files: int = MAX_FILES,
        max_steps: int = 8,
        test_dependencies: Sequence[str] | None = None,
        cache_dir: str | None = None,
        time_limit_multiple: float = 3.0,
        time_limit_cap_s: float = 600.0,
        **kwargs: Any,
    ) -> None:
        reject_unknown_kwargs(type(self), kwargs, supplied=("grader", "task_bank"))
        self.reruns = check_positive_int("reruns", reruns, minimum=2)
        if schedule_seed is not None:
            check_positive_int("schedule_seed", schedule_seed, minimum=0)
        if not isinstance(order_analysis, bool):
            raise ValueError(f"order_analysis must be a bool, got {order_analysis!r}")
        check_positive_int("max_file_bytes", max_file_bytes)
        check_positive_int("max_files", max_files)
        if (repo_path is None) != (test_id is None):
            raise ValueError("repo_path and test_id must be given together")
        if repo_path is None and (test_dependencies is not None or cache_dir is not None):
            raise ValueError("repo_path: required with test_dependencies/cache_dir")
        bank: FlakyTaskBank | RepoTaskBank
        if repo_path is not None:
            bank = RepoTaskBank(
                repo_path,
                str(test_id),
                max_file_bytes=max_file_bytes,
                max_files=max_files,
                test_dependencies=test_dependencies,
                cache_dir=cache_dir,
                time_limit_multiple=time_limit_multiple,
                time_limit_cap_s=time_limit_cap_s,
            )
        else:
            if categories is not None and (
                isinstance(categories, str) or set(categories) - set(CATEGORIES)
            ):
                raise ValueError(
                    f"categories must be a list drawn from {list(CATEGORIES)}, got {categories!r}"
                )
            bank = FlakyTaskBank(categories=categories)
        self.order_analysis = order_analysis
        self._baselines: dict[tuple[str, int, int], float] = {}
        self._power_refs: dict[tuple[str, int, int], PowerReference] = {}
        grader = FlakyGrader(
            reruns=self.reruns,
            schedule_seed=schedule_seed,
            weights=weights,
            baseline=self._baseline_for,
            power_reference=self._power_reference_for,
        )
        super().__init__(task_bank=bank, grader=grader, max_steps=max_steps, **kwargs)
        self.grader: FlakyGrader
        if isinstance(bank, RepoTaskBank):
            try:
                bank.collect(self.runner)  # pytest's own ids; ValueError for an unknown id
            except BaseException:
                self.close()
                raise
        self._preflight: Preflight | None = None
        self._history: list[str] = []
        self._current: float = 0.0
        self._frontier: list[str] = []
        self._preflights: dict[tuple[str, int, int, bool], Preflight] = {}

    # ------------------------------------------------------------ baselines
    def _baseline_for(self, task: Task, reruns: int, seed: int) -> float:
        key = (task.task_id, reruns, seed)
        if key in self._baselines:
            return self._baselines[key]
        bank = self.task_bank
        if (
            isinstance(bank, FlakyTaskBank)
            and reruns == bank.manifest_reruns
            and seed == FlakyHidden.of(task).schedule_seed
            and bank.baseline(task.task_id) is not None
        ):
            value = float(bank.baseline(task.task_id))  # type: ignore[arg-type]
        else:
            value = self._chaos_pass_rate(task, {p: task.files[p] for p in task.editable_files})[0]
        self._baselines[key] = value
        return value

    def _chaos_pass_rate(
        self, task: Task, files: Mapping[str, str]
    ) -> tuple[float, list[RerunOutcome]]:
        """One ``run_many`` of the chaos reruns on ``files``."""
        h = FlakyHidden.of(task)
        workspace = Workspace(
            task.files, task.editable_files, prefix="fg-flaky-rate-", data_files=task.data_files
        )
        try:
            directory = workspace.materialise(dict(files))
            schedule = self.grader.schedule(task)
            jobs = chaos_jobs(
                str(directory),
                h.target,
                h.test_ids,
                h.test_paths,
                schedule,
                options=h.run_options,
            )
            outcomes = rerun_outcomes(self.runner.run_many(jobs), schedule, h.target, h.test_ids)
        finally:
            workspace.close()
        return sum(o.passed for o in outcomes) / len(outcomes), outcomes

    def _power_reference_for(self, task: Task, reruns: int, seed: int) -> PowerReference:
        """Which bug-injected mutants the *pristine* target catches, under the first
        rerun of the schedule in which it passed (cached per task and schedule)."""
        key = (task.task_id, reruns, seed)
        ref = self._power_refs.get(key)
        if ref is not None:
            return ref
        h = FlakyHidden.of(task)
        current = getattr(self, "_task", None)
        pf = self._preflight if self._preflight is not None and current is task else None
        outcomes = pf.outcomes if pf is not None else None
        if not outcomes or len(outcomes) != reruns:
            pristine = {p: task.files[p] for p in task.editable_files}
            outcomes = self._chaos_pass_rate(task, pristine)[1]
        run = next((i for i, o in enumerate(outcomes) if o.passed), None)
        caught: list[int] = []
        specs = [MutantSpec.from_json(m) for m in h.repo_mutants or []]
        if run is not None and specs:
            schedule = self.grader.schedule(task)
            workspace = Workspace(
                task.files,
                task.editable_files,
                prefix="fg-flaky-power-",
                data_files=task.data_files,
            )
            try:
                dirs = [str(workspace.materialise({}, {s.path: s.source})) for s in specs]

                def run_all(indices: Sequence[int], times: int = 1) -> list[Any]:
                    jobs = []
                    for i in indices:
                        for _ in range(times):
                            jobs += chaos_jobs(
                                dirs[i],
                                h.target,
                                h.test_ids,
                                h.test_paths,
                                schedule[run : run + 1],
                                options=h.run_options,
                            )
                    return list(self.runner.run_many(jobs))

                results = run_all(range(len(specs)))
                one = schedule[run : run + 1]
                failed = {
                    i: o.error_type or o.status
                    for i, r in enumerate(results)
                    if not target_passed(r, h.target, 1) and not _rounding_only(r, h.target)
                    for o in rerun_outcomes([r], one, h.target, h.test_ids)
                }

                def rerun(indices: Sequence[int], times: int) -> list[list[bool]]:
                    again = run_all(indices, times)
                    passed = [target_passed(r, h.target, 1) for r in again]
                    return [passed[k * times : (k + 1) * times] for k in range(len(indices))]

                def confirm(indices: Sequence[int]) -> list[list[bool]]:
                    return confirm_in_rounds(rerun, indices)

                flaky_kinds = {o.error_type or o.status for o in outcomes if not o.passed}
                caught = confirmed_catches(failed, flaky_kinds, confirm)
            finally:
                workspace.close()
        ref = PowerReference(run=run, caught=tuple(caught))
        self._power_refs[key] = ref
        return ref

    # -------------------------------------------------------------- episode
    def _begin_episode(self, task: Task) -> None:
        self._workspace = Workspace(
            task.files, task.editable_files, prefix="fg-flaky-", data_files=task.data_files
        )
        self._notes, self._diagnoses, self._history = [], [], []
        self._frontier = []
        self._last_test_report = None
        h = FlakyHidden.of(task)
        # Preflight is a deterministic function of (task, reruns, schedule seed): run it
        # once per task, not on every reset (datasets reset once per row).
        key = (task.task_id, self.reruns, self.grader.seed_for(task), self.order_analysis)
        cached = self._preflights.get(key)
        if cached is None:
            directory = self.workspace.grading_copy()
            try:
                cached = preflight(
                    self.runner,
                    str(directory),
                    h.target,
                    h.test_ids,
                    h.test_paths,
                    schedule=self.grader.schedule(task),
                    order_analysis=self.order_analysis,
                    options=h.run_options,
                )
            finally:
                self.workspace.discard(directory)
            if len(self._preflights) >= 1024:
                self._preflights.pop(next(iter(self._preflights)))
            self._preflights[key] = cached
        self._preflight = cached
        self._current = self._preflight.pass_rate
        self._baselines.setdefault(
            (task.task_id, self.reruns, self.grader.seed_for(task)), self._current
        )
        self._record_history("preflight", self._preflight.outcomes)
        self._progress = self._current
        # The power reference (which mutants the pristine test catches) is computed on
        # the first grading that needs it (cached per task): a reset, and a submission
        # gated statically, run no mutant.

    def _record_history(self, label: str, outcomes: Sequence[RerunOutcome]) -> None:
        passed = sum(o.passed for o in outcomes)
        self._history.append(f"[{label}] pass rate {passed}/{len(outcomes)}")
        frontier: list[str] = []
        for o in outcomes:
            mark = "PASS" if o.passed else "FAIL"
            err = "" if o.passed else f" {o.error_type or o.status}: {o.message[:120]}"
            self._history.append(f"  {mark} {o.run.describe()}{err}")
            for frame in o.frames:
                if frame not in frontier:
                    frontier.append(frame)
        self._history = self._history[-40:]
        if frontier:
            self._frontier = frontier[-8:]

    def _visible_pass_rate(self) -> float:
        rate, outcomes = self._chaos_pass_rate(self.task, self.workspace.current)
        self._record_history("after edit", outcomes)
        self._current = rate
        return rate

    def _run_tests_action(self, action: RunTestsAction) -> tuple[str, float | None]:
        # Here "the tests" are the chaos reruns of the flaky test: the pass rate under
        # the seeded schedule is the progress measure (and the shaping potential). Named
        # tests (unknown ids are rejected before this, as in every code family) also get
        # one calm run.
        rate, outcomes = self._chaos_pass_rate(self.task, self.workspace.current)
        self._record_history("run_tests", outcomes)
        self._current = rate
        failed = [o for o in outcomes if not o.passed][:5]
        lines = [f"Chaos reruns: target passed {rate:.0%} of {len(outcomes)}."]
        lines += [f"FAIL {o.run.describe()}: {o.error_type}: {o.message[:160]}" for o in failed]
        named = [t for t in action.tests or [] if t != FlakyHidden.of(self.task).target]
        if named:
            lines.append(self._calm_report(named))
        return "\n".join(lines), rate

    def _calm_report(self, tests: Sequence[str]) -> str:
        """One calm run of ``tests`` (in the given order) on the current workspace."""
        from forgegym.envs.flaky.runs import order_job

        h = FlakyHidden.of(self.task)
        directory = self.workspace.grading_copy()
        try:
            result = self.runner.run(
                order_job(
                    str(directory),
                    h.test_ids,
                    h.test_paths,
                    list(tests),
                    h.run_options,
                )
            )
        finally:
            self.workspace.discard(directory)
        verdicts = result.verdicts if hasattr(result, "verdicts") else {}
        shown = [f"{'PASS' if verdicts.get(t) else 'FAIL'} {t}" for t in tests]
        return "Calm run of the named tests:\n" + "\n".join(shown)

    def _grade(self) -> RewardBreakdown:
        from forgegym.grading.batch import grade_many

        submission = self._submission()
        breakdown = grade_many(self.grader, [submission], self.runner)[0]
        graded = submission.grading_state.get("flaky_pass_rate")
        if graded is not None:
            self._current = float(graded)  # info["pass_rate"] is the graded p from now on
        return breakdown

    def _lint_report(self) -> str:
        try:
            return super()._lint_report()
        except Exception as exc:  # noqa: BLE001 - ruff missing must not end the episode
            return f"lint unavailable: {type(exc).__name__}"

    def _extra_info(self) -> dict[str, Any]:
        info = super()._extra_info()
        info["pass_rate"] = self._current
        info["baseline_pass_rate"] = self._preflight.pass_rate if self._preflight else None
        return info

    # ---------------------------------------------------------- observation
    def _task_section(self) -> str:
        task, pf = self.task, self._preflight
        parts = [f"# Task: {task.title}\n\n{task.description}"]
        parts.append(
            f"Target test: `{FlakyHidden.of(task).target}`. Categories: {', '.join(CATEGORIES)}."
        )
        if pf is not None:
            parts.append(
                f"## Preflight\n{pf.label}; calm run {'passed' if pf.calm_passed else 'failed'}; "
                f"baseline pass rate {pf.pass_rate:.2f} over {pf.reruns} reruns; "
                f"current pass rate {self._current:.2f}."
                + (f"\nOrder analysis: {pf.order.render()}" if pf.order else "")
            )
        signals = deep_signals(self.workspace.current, limit=20)
        if signals:
            parts.append("## Deep signals (static)\n" + "\n".join(f"- {s}" for s in signals))
        if self._frontier:
            parts.append(
                "## Failure frontier (innermost frames)\n"
                + "\n".join(f"- {f}" for f in self._frontier)
            )
        if self._history:
            parts.append("## Run history\n" + "\n".join(self._history[-24:]))
        if self._last_breakdown is not None:
            parts.append("## Last reward\n" + self._last_breakdown.render())
        return "\n\n".join(parts)

    def _protocol_section(self) -> str:
        return (
            "## Actions\nReply with one JSON action, or a list, in a ```json block: edit "
            "{edits, diagnosis?}, run_tests, lint, plan/review/reflect {text}, submit "
            "{diagnosis?}. diagnosis = {category, location: 'path::func', confidence, "
            "claims}. Example:\n" + self.protocol_example(_EXAMPLE)
        )
