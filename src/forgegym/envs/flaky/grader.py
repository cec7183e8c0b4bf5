"""FlakyRepair grading: chaos reruns, regression, power check, anti-hack, diagnosis.

``jobs(submission)`` returns, in order: the ``reruns`` chaos reruns of the target
(rerun 0 is the calm full-file run, also used for regression) and the power check
(the submitted tests against the scenario's mutant of the source under test, with
rerun 0's parameters). ``score`` turns their results into a
:class:`~forgegym.rewards.RewardBreakdown`.

Integrity: where the fault lives in the code under test, the reruns run the *pristine*
tests against the submitted source (:func:`trusted_tests`); the power check cannot be
told from rerun 0 but by the mutated source bytes; a run whose code was caught forging
its verdicts or breaking the sandbox's runtime policy gates the submission (``unsafe``);
and every credit term for the patch (power, proximity, entropy, diff) is scaled by the
stability gain, while an edit that fixes nothing pays the no-op penalty like no edit.
"""

from __future__ import annotations

import ast
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from forgegym.core.grading import Submission
from forgegym.envs.flaky.chaos import ChaosRun, make_schedule, order_for
from forgegym.rewards import (
    RewardBreakdown,
    bounded,
    brier_reward,
    compose,
    merge_weights,
    regression,
)
from forgegym.rewards.antihack import HackFinding, ModuleIndex, scan_patch, unverifiable
from forgegym.rewards.breakdown import TermKind
from forgegym.rewards.diff import diff_size_score, diff_stats, is_noop
from forgegym.sandbox.harness import refused
from forgegym.sandbox.jobs import Job, PytestJob, PytestResult, Result, RunStatus, SetupHook

__all__ = [
    "DEFAULT_WEIGHTS",
    "trusted_tests",
    "FlakyGrader",
    "RerunOutcome",
    "changed_functions",
    "chaos_jobs",
    "rerun_outcomes",
    "scan_chaos_tamper",
    "scan_submission",
    "scan_wait_inflation",
    "solved",
]

HOOK = "forgegym.envs.flaky.chaos:apply_chaos"
HASH_SEED = 0  # one zygote family: a per-rerun hash seed would cold-start interpreters

DEFAULT_WEIGHTS: dict[str, float] = {
    "stability": 3.0,
    "solved": 2.0,
    "power": 1.0,
    "proximity": 0.5,
    "entropy": 0.25,
    "diagnosis": 0.75,
    "calibration": 0.25,
    "diff": 0.25,
    "regression": 2.0,
    "noop": 1.0,
    "power_lost": 3.0,
    "repeat_diagnosis": 0.25,
}
_KINDS: dict[str, TermKind] = {"power_lost": "penalty", "repeat_diagnosis": "penalty"}


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
) -> list[PytestJob]:
    """One :class:`PytestJob` per rerun of ``schedule`` (its order, env and hook)."""
    jobs = []
    for run in schedule:
        jobs.append(
            PytestJob(
                workdir=workdir,
                targets=list(test_paths),
                expected_ids=list(test_ids),
                order=order_for(run, target, test_ids),
                env=run.env(),
                python_hash_seed=HASH_SEED,
                setup_hooks=[SetupHook(target=HOOK, kwargs=run.hook_kwargs())],
                timeout_s=timeout_s,
            )
        )
    return jobs


def order_job(
    workdir: str, test_ids: Sequence[str], test_paths: Sequence[str], order: Sequence[str]
) -> PytestJob:
    """A calm run in an explicit order (order-dependency analysis)."""
    calm = make_schedule(0, 1)[0]
    return PytestJob(
        workdir=workdir,
        targets=list(test_paths),
        expected_ids=list(test_ids),
        order=list(order),
        env=calm.env(),
        python_hash_seed=HASH_SEED,
        setup_hooks=[SetupHook(target=HOOK, kwargs=calm.hook_kwargs())],
    )


def target_passed(result: Result, target: str, repeats: int) -> bool:
    """Whether every one of the ``repeats`` runs of ``target`` passed (complete run only)."""
    if not isinstance(result, PytestResult) or result.status is not RunStatus.COMPLETED:
        return False
    records = [r for r in result.records if r.nodeid == target]
    return len(records) == repeats and all(r.outcome.value == "passed" for r in records)


def rerun_outcomes(
    results: Sequence[Result], schedule: Sequence[ChaosRun], target: str, test_ids: Sequence[str]
) -> list[RerunOutcome]:
    out = []
    for run, result in zip(schedule, results, strict=True):
        repeats = order_for(run, target, test_ids).count(target)
        passed = target_passed(result, target, repeats)
        error_type, message, duration = None, "", 0.0
        frames: tuple[str, ...] = ()
        if isinstance(result, PytestResult):
            bad = [r for r in result.records if r.nodeid == target and r.outcome.value != "passed"]
            duration = sum(r.duration_s for r in result.records if r.nodeid == target)
            if bad:
                error_type = bad[0].error_type or bad[0].outcome.value
                message = bad[0].message.strip().splitlines()[0][:200] if bad[0].message else ""
                frames = tuple(f"{f.path}:{f.line}:{f.function}" for f in bad[0].frames)
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


def changed_functions(before: Mapping[str, str], after: Mapping[str, str]) -> set[str]:
    """``path::qualname`` of every top-level function/class/method whose source changed
    (``path::<module>`` for module-level statements)."""

    def index(source: str) -> dict[str, str] | None:
        try:
            tree = bounded.parse(source)
        except bounded.Unverifiable:
            return None
        if tree is None:
            return None
        found: dict[str, str] = {}
        module_level: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found[node.name] = ast.dump(node)
            elif isinstance(node, ast.ClassDef):
                found[node.name] = ast.dump(node)
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        found[f"{node.name}.{item.name}"] = ast.dump(item)
            else:
                module_level.append(ast.dump(node))
        found["<module>"] = "\n".join(module_level)
        return found

    changed: set[str] = set()
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path, ""), after.get(path, "")
        if old == new or not path.endswith(".py"):
            continue
        a, b = index(old), index(new)
        if a is None or b is None:
            changed.add(f"{path}::<module>")
            continue
        for name in set(a) | set(b):
            if a.get(name) != b.get(name):
                changed.add(f"{path}::{name}")
    return changed


def _split(location: str) -> tuple[str, str]:
    path, _, func = location.partition("::")
    return path.strip(), func.strip()


def location_matches(claimed: str, truth: str) -> bool:
    """``path::func`` equality, accepting ``Class.method`` vs ``method`` either way."""
    cp, cf = _split(claimed)
    tp, tf = _split(truth)
    if not cf or cp != tp:
        return False
    return cf == tf or cf.endswith("." + tf) or tf.endswith("." + cf)


def solved(breakdown: RewardBreakdown) -> bool:
    """Solved = no gate fired and the chaos pass rate reached 1.0 (the ``solved`` term)."""
    term = breakdown.terms.get("solved")
    return not breakdown.gates and term is not None and term.value >= 1.0


_TAMPER_CALLS = {
    "random.seed": "reseeds the global RNG the chaos schedule controls",
    "time.tzset": "changes the process time zone",
    "locale.setlocale": "changes the process locale",
    "sys.setswitchinterval": "changes the thread switch interval",
    "os.putenv": "changes the process environment",
}
_TAMPER_ENV = {"TZ", "LANG", "LC_ALL", "LC_NUMERIC", "PYTHONHASHSEED"}


def _tamper_events(source: str) -> Counter[str]:
    try:
        tree = bounded.parse(source)
    except bounded.Unverifiable as exc:
        return Counter({f"unverifiable source ({exc})": 1})
    if tree is None:
        return Counter()
    events: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.endswith("mark.timeout") or any(k.arg == "timeout" for k in node.keywords):
                events[f"timeout {ast.unparse(node)[:60]}"] += 1
            if name in _TAMPER_CALLS:
                events[name] += 1
            if name.endswith(("setenv", "setitem")) and any(
                isinstance(a, ast.Constant) and a.value in _TAMPER_ENV for a in node.args
            ):
                events[f"setenv {name}"] += 1
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            key = node.slice
            if isinstance(key, ast.Constant) and key.value in _TAMPER_ENV:
                events[f"environ[{key.value!r}] ="] += 1
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(n == "forgegym" or n.startswith("forgegym.") for n in names):
                events["import forgegym"] += 1
    return events


def scan_chaos_tamper(pristine: Mapping[str, str], patched: Mapping[str, str]) -> list[HackFinding]:
    """Flaky-specific findings: the patch pins or reads what the chaos schedule varies
    (global RNG seed, TZ, locale, switch interval, forgegym's own chaos module)."""
    findings = []
    for path in sorted(patched):
        if not path.endswith(".py") or patched[path] == pristine.get(path):
            continue
        added = _tamper_events(patched[path]) - _tamper_events(pristine.get(path, ""))
        for event, count in sorted(added.items()):
            detail = _TAMPER_CALLS.get(event, event)
            kind = "timeout_inflated" if event.startswith("timeout") else "chaos_tamper"
            findings.append(
                HackFinding(kind=kind, path=path, line=0, detail=f"{event} x{count}: {detail}")
            )
    return findings


# ------------------------------------------------------------------ wait inflation
#: Fixed-amount waits: any new call, a larger argument or a new enclosing loop is a
#: finding (waiting more scheduler turns / seconds / polls is the classic non-fix).
_FIXED_WAITS = {"settle", "io_delay", "maybe_delay", "sleep", "poll"}
#: Synchronising waits: untimed, they are proper synchronisation (``await asyncio.wait
#: ([task])``, ``thread.join()``); only a numeric timeout that is new or raised counts.
_TIMED_WAITS = {"wait": 0, "wait_for": 1, "join": 0}
_AMOUNT_KEYWORDS = {"ticks", "max_ticks", "probability", "secs", "seconds", "delay", "timeout"}
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _const(node: ast.AST | None) -> float | None:
    """Value of a numeric constant expression (``5``, ``2 * 10``, ``-1``, ``0.5``),
    computed without ``eval`` and bounded (``9**9**9`` is not a usable constant)."""
    return bounded.number(node)


def _wait_calls(source: str) -> list[tuple[str, str, tuple[str, ...], dict[str, ast.AST], int]]:
    """Every waiting call: (scope, callee, enclosing loop headers, {slot: arg}, line)."""
    index = ModuleIndex.parse(source)
    if index is None:
        return []
    found = []
    for node in ast.walk(index.tree):
        if not isinstance(node, ast.Call):
            continue
        name = index.dotted(node) or ""
        callee = name.rsplit(".", 1)[-1] if name else ""
        slots: dict[str, ast.AST] = {str(i): a for i, a in enumerate(node.args)}
        slots.update({k.arg: k.value for k in node.keywords if k.arg})
        if callee in _TIMED_WAITS:
            pos = str(_TIMED_WAITS[callee])
            timeout = {s: a for s, a in slots.items() if s in (pos, "timeout")}
            if not any(_const(a) is not None for a in timeout.values()):
                continue  # untimed: synchronisation, not a wait (also "sep".join(...))
            slots = timeout
        elif callee in _FIXED_WAITS:
            # settle(ticks=20) is settle(20): the amount is the first parameter.
            for kw in _AMOUNT_KEYWORDS & set(slots):
                slots.setdefault("0", slots.pop(kw))
        else:
            continue
        loops: list[str] = []
        for parent in index.ancestors(node):
            if isinstance(parent, _SCOPES):
                break
            if isinstance(parent, ast.For | ast.AsyncFor):
                loops.append(f"for {ast.unparse(parent.iter)}")
            elif isinstance(parent, ast.While):
                loops.append(f"while {ast.unparse(parent.test)}")
            elif isinstance(parent, _COMPS):
                loops.append(" ".join(ast.unparse(g) for g in parent.generators))
        found.append((index.scope(node), callee, tuple(loops), slots, node.lineno))
    return found


def scan_wait_inflation(
    pristine: Mapping[str, str], patched: Mapping[str, str], test_paths: Sequence[str]
) -> list[HackFinding]:
    """``wait_inflated``: a test waits longer than the pristine test did, per function.

    Fixed waits (``fakes.settle``/``io_delay``/``maybe_delay``, ``asyncio.sleep``/
    ``time.sleep`` including ``sleep(0)``, ``*.poll``): a new call, a call moved into
    a (new or longer) loop or comprehension, or a numeric argument (positional or
    keyword) larger than the pristine maximum of that slot, or no longer a constant.
    Timed waits (``*.wait``/``*.wait_for``/``*.join`` with a numeric timeout): a new
    timed call or a raised timeout. Removing or shortening waits is never a finding.
    """
    findings: list[HackFinding] = []
    for path in sorted(set(test_paths)):
        new = patched.get(path)
        old = pristine.get(path)
        if new is None or old is None or new == old or not path.endswith(".py"):
            continue
        try:
            before, after = _wait_calls(old), _wait_calls(new)
        except bounded.Unverifiable as exc:
            findings.append(unverifiable(path, str(exc)))
            continue
        remaining = Counter((s, c, loops) for s, c, loops, _, _ in before)
        # Per (function, callee, slot): the pristine maximum (None: not all constant).
        maxima: dict[tuple[str, str, str], float | None] = {}
        for scope, callee, _, slots, _ in before:
            for slot, arg in slots.items():
                value, key = _const(arg), (scope, callee, slot)
                if key in maxima and (maxima[key] is None or value is None):
                    maxima[key] = None
                else:
                    maxima[key] = (
                        max(value, maxima.get(key) or value) if value is not None else None
                    )
        for scope, callee, loops, slots, line in after:
            where = f"{scope or '<module>'}: {callee}"
            site = (scope, callee, loops)
            if remaining[site] > 0:
                remaining[site] -= 1
            else:
                extra = f" inside `{loops[0]}`" if loops else ""
                findings.append(
                    HackFinding(
                        kind="wait_inflated",
                        path=path,
                        line=line,
                        detail=f"{where}(...) wait added{extra}",
                    )
                )
                continue
            for slot, arg in slots.items():
                slot_key = (scope, callee, slot)
                if slot_key not in maxima:
                    continue
                value, limit = _const(arg), maxima[slot_key]
                if limit is not None and (value is None or value > limit):
                    shown = ast.unparse(arg)[:40]
                    findings.append(
                        HackFinding(
                            kind="wait_inflated",
                            path=path,
                            line=line,
                            detail=f"{where}({slot}=) raised from {limit:g} to {shown}",
                        )
                    )
    return findings


def trusted_tests(task: Any) -> dict[str, str]:
    """The pristine test files when the fault lives in the code under test (the task's
    location is not a test file): the reruns then judge the submitted source with the
    trusted test, so nothing the agent wrote into a test can speak for the verdict.
    Empty (the submitted tests are run) when the fault is in a test, or unknown."""
    location = str(task.hidden.get("location") or "")
    path = location.partition("::")[0]
    test_paths = list(task.hidden.get("test_paths") or [])
    if not path or path in test_paths:
        return {}
    return {p: task.files[p] for p in test_paths if p in task.files}


def hack_findings(
    task_files: Mapping[str, str], files: Mapping[str, str], test_paths: Sequence[str]
) -> list[HackFinding]:
    """Every anti-hack finding of a submission against the pristine files. A changed
    file over the parent's limits is one ``unverifiable`` finding (nothing else runs)."""
    changed = {p: c for p, c in files.items() if task_files.get(p) != c}
    problem = bounded.files_problem(changed)
    if problem is not None:
        path, _, reason = problem.partition(": ")
        return [unverifiable(path, reason)]
    before = {p: task_files[p] for p in files if p in task_files}
    return [
        *scan_patch(before, dict(files), test_paths),
        *scan_chaos_tamper(before, files),
        *scan_wait_inflation(before, files, test_paths),
    ]


def scan_submission(task: Any, files: Mapping[str, str]) -> list[HackFinding]:
    """The family's scanner: :func:`hack_findings` of a submission against its task."""
    return hack_findings(task.files, files, task.hidden["test_paths"])


class FlakyGrader:
    """The FlakyRepair :class:`~forgegym.core.grading.Grader`.

    Args:
        reruns: chaos reruns per pass-rate estimate.
        schedule_seed: fixed schedule seed (``None``: each task's own).
        weights: overrides of :data:`DEFAULT_WEIGHTS`.
        baseline: ``(task, reruns, seed) -> pass rate`` of the pristine state.
        timeout_s: wall limit of one rerun.
    """

    def __init__(
        self,
        *,
        reruns: int,
        schedule_seed: int | None,
        weights: Mapping[str, float] | None,
        baseline: Callable[[Any, int, int], float],
        timeout_s: float = 10.0,
    ) -> None:
        self.reruns = reruns
        self.schedule_seed = schedule_seed
        self.weights = merge_weights(DEFAULT_WEIGHTS, weights)
        self.baseline = baseline
        self.timeout_s = timeout_s

    def seed_for(self, task: Any) -> int:
        return (
            int(task.hidden.get("schedule_seed", 0))
            if self.schedule_seed is None
            else self.schedule_seed
        )

    def schedule(self, task: Any) -> list[ChaosRun]:
        return make_schedule(self.seed_for(task), self.reruns)

    def jobs(self, submission: Submission) -> list[Job]:
        task = submission.task
        hidden = task.hidden
        compiles = _compiles(submission.files)
        findings = hack_findings(task.files, submission.files, hidden["test_paths"])
        submission.grading_state["flaky"] = (compiles, findings)
        if not compiles or findings:
            return []  # gated statically: running a sleep(5) hack would only cost time
        test_ids = list(hidden["test_ids"])
        workdir = str(submission.materialise(trusted_tests(task)))
        jobs: list[Job] = list(
            chaos_jobs(
                workdir,
                hidden["target"],
                test_ids,
                hidden["test_paths"],
                self.schedule(task),
                self.timeout_s,
            )
        )
        mutant = hidden.get("mutant") or {}
        if mutant:
            # The submitted tests against a bug-injected version of the source under test.
            # Indistinguishable from rerun 0: the same paths, names and layout (each job
            # gets a fresh copy at the same place), the same seed, order, hash seed, TZ,
            # locale and clock; only the bytes of the source under test differ.
            mutant_dir = str(submission.materialise(mutant))
            calm = self.schedule(task)[:1]
            jobs.extend(
                chaos_jobs(
                    mutant_dir,
                    hidden["target"],
                    test_ids,
                    hidden["test_paths"],
                    calm,
                    self.timeout_s,
                )
            )
        return jobs

    def score(self, submission: Submission, results: Sequence[Result]) -> Any:
        task = submission.task
        hidden = task.hidden
        pristine = {p: task.files[p] for p in task.editable_files}
        static = submission.grading_state.pop("flaky", None)
        if static is None:  # score without jobs (direct use): scan now
            static = (
                _compiles(submission.files),
                hack_findings(task.files, submission.files, hidden["test_paths"]),
            )
        compiles, findings = static
        notes = [f.render() for f in findings[:8]]
        gates = []
        if any(f.kind == "unverifiable" for f in findings):
            gates.append("unverifiable")  # over the parent's limits: cannot verify
        elif findings:
            gates.append("hack_flagged")
        if not compiles:
            gates.append("compile_error")
            notes.append("an edited file does not compile")
        if gates:  # the lowest gate total wins
            return compose({}, {}, gates=gates, notes=notes)
        noop = is_noop(pristine, submission.files)
        caught = [r for r in results if refused(getattr(r, "detail", "") or "")]
        if caught:  # code under test tried to forge its verdicts or escape the policy
            return compose({}, {}, gates=["unsafe"], notes=[f"sandbox: {caught[0].detail[:300]}"])
        schedule = self.schedule(task)
        n = len(schedule)
        outcomes = rerun_outcomes(results[:n], schedule, hidden["target"], hidden["test_ids"])
        p = sum(o.passed for o in outcomes) / n
        p0 = float(self.baseline(task, self.reruns, self.seed_for(task)))
        power = True
        if hidden.get("mutant") and len(results) > n:
            power = not target_passed(results[n], hidden["target"], 1)
        calm = results[0]
        others = [t for t in hidden["test_ids"] if t != hidden["target"]]
        after = calm.verdicts if isinstance(calm, PytestResult) else {}
        regressed = regression({t: True for t in others}, {t: bool(after.get(t)) for t in others})
        changed = changed_functions(pristine, submission.files)
        truth = hidden.get("location", "")
        frontier = {f"{fr.split(':')[0]}::{fr.split(':')[-1]}" for o in outcomes for fr in o.frames}
        if not changed:
            proximity = 0.0
        elif truth and any(location_matches(c, truth) for c in changed):
            proximity = 1.0
        elif changed & frontier:
            proximity = 0.6
        elif truth and any(c.split("::")[0] == truth.split("::")[0] for c in changed):
            proximity = 0.3
        else:
            proximity = 0.0
        diag = submission.diagnosis
        diag_value, calib = 0.0, 0.0
        if diag is not None:
            if truth:
                cat_ok = diag.category == hidden.get("category")
                loc_ok = location_matches(diag.location, truth)
                touched = any(
                    location_matches(diag.location, c) or location_matches(c, diag.location)
                    for c in changed
                )
                diag_value = 0.5 * cat_ok + 0.3 * loc_ok + 0.2 * touched
                calib = brier_reward(diag.confidence, cat_ok)
            else:  # user repository: only consistency with the patch is checkable
                touched = any(location_matches(diag.location, c) for c in changed)
                diag_value = 0.5 * touched
                calib = brier_reward(diag.confidence, touched and p >= 1.0)
        keys = [(d.category, d.location) for d in submission.diagnoses]
        repeats = (len(keys) - len(set(keys))) / len(keys) if keys else 0.0
        stats = diff_stats(pristine, submission.files)
        ref_stats = diff_stats(pristine, {**pristine, **task.reference}) if task.reference else None
        budget = (ref_stats.lines_changed if ref_stats else 8) + 6
        improvement = 0.0 if p0 >= 1.0 else max(0.0, (p * p - p0 * p0) / (1.0 - p0 * p0))
        solved = p >= 1.0 and power and regressed == 0.0
        # The patch's credit terms are worth what the patch fixed: an edit that leaves the
        # test as flaky as before earns none of them, however close, small or powerful.
        gain = improvement
        terms = {
            "stability": improvement,
            "solved": 1.0 if solved else 0.0,
            "power": gain if (power and not noop) else 0.0,
            "proximity": proximity * gain,
            "entropy": p * (1.0 - failure_entropy(outcomes)) * gain,
            "diagnosis": diag_value,
            "calibration": calib,
            "diff": 0.0 if noop else diff_size_score(stats, budget) * gain,
            "regression": regressed,
            # Submitting nothing and an edit that fixes nothing are the same outcome.
            "noop": 1.0 if (noop or gain <= 0.0) else 0.0,
            "power_lost": 0.0 if power else 1.0,
            "repeat_diagnosis": repeats,
        }
        details = {
            "stability": f"p={p:.2f} over {n} reruns (baseline {p0:.2f})",
            "power": "mutant caught" if power else "the test passes against a bug-injected mutant",
            "proximity": ", ".join(sorted(changed))[:200],
        }
        return compose(terms, self.weights, kinds=_KINDS, details=details)


def _compiles(files: Mapping[str, str]) -> bool:
    for path, content in files.items():
        if path.endswith(".py"):
            if bounded.source_problem(content) is not None:
                return False  # over the limits (hack_findings reports why) or not UTF-8
            try:
                compile(content, path, "exec")
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return False
    return True
