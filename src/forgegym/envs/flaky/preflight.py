"""Preflight classification of a test, and scenario validation.

* sanity: the test file collects and the target runs;
* determinism: the target passes in the calm run (file order, UTC, C locale);
* flakiness: under the chaos schedule its pass rate is strictly between 0 and 1.

Order-dependency analysis follows iPFlakies: run the target alone and after each
other test; a test after which it fails is a *polluter* (of a *victim*); if it fails
alone but passes in file order, the tests before it that make it pass are
*state-setters* (it is *brittle*).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from forgegym.core.task import Task
from forgegym.envs.flaky.antihack import hack_findings
from forgegym.envs.flaky.chaos import ChaosRun, make_schedule
from forgegym.envs.flaky.hidden import FlakyHidden
from forgegym.envs.flaky.runs import chaos_jobs, order_job, rerun_outcomes, target_passed
from forgegym.sandbox.jobs import PytestResult, Result, RunStatus
from forgegym.sandbox.workspace import Workspace

__all__ = ["OrderFindings", "Preflight", "preflight", "validate_scenario", "validate_many"]


@dataclass
class OrderFindings:
    """iPFlakies-style order findings for the target."""

    passes_alone: bool
    polluters: list[str] = field(default_factory=list)
    state_setters: list[str] = field(default_factory=list)
    kind: str = "none"  # "victim", "brittle" or "none"

    def render(self) -> str:
        if self.kind == "victim":
            return f"victim: passes alone, fails after {', '.join(self.polluters)} (polluters)"
        if self.kind == "brittle":
            setters = ", ".join(self.state_setters) or "(the tests before it)"
            return f"brittle: fails alone; passes after state-setter(s) {setters}"
        return "no order dependency found (alone and after each other test agree)"


@dataclass
class Preflight:
    """Classification of one target under one schedule."""

    collected: bool
    calm_passed: bool
    pass_rate: float
    reruns: int
    order: OrderFindings | None = None
    detail: str = ""
    #: Per-rerun outcomes of the target (``grader.RerunOutcome``).
    outcomes: list[Any] = field(default_factory=list)

    @property
    def label(self) -> str:
        # The pass rate decides; the calm run is one rerun among them (a test failing 30%
        # of reruns may fail there too, and is still flaky, not failing).
        if not self.collected:
            return "broken (does not collect/run)"
        if self.pass_rate >= 1.0:
            return "stable (passes every chaos rerun)"
        if self.pass_rate <= 0.0:
            return "failing (fails every rerun, the calm one included)"
        return "flaky"

    @property
    def flaky(self) -> bool:
        return self.label == "flaky"

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("outcomes", None)
        data["label"] = self.label
        return data


def _order_findings(results: Sequence[Result], target: str, others: Sequence[str]) -> OrderFindings:
    alone = target_passed(results[0], target, 1)
    after = {o: target_passed(r, target, 1) for o, r in zip(others, results[1:], strict=True)}
    # Only tests that ran count: a run that did not complete names nobody.
    ran = {
        o
        for o, r in zip(others, results[1:], strict=True)
        if isinstance(r, PytestResult)
        and r.status is RunStatus.COMPLETED
        and any(rec.nodeid == o for rec in r.records)
    }
    polluters = [o for o, ok in after.items() if not ok and o in ran] if alone else []
    setters = [o for o, ok in after.items() if ok and o in ran] if not alone else []
    kind = "victim" if polluters else "brittle" if not alone else "none"
    return OrderFindings(passes_alone=alone, polluters=polluters, state_setters=setters, kind=kind)


def preflight(
    runner: Any,
    workdir: str,
    target: str,
    test_ids: Sequence[str],
    test_paths: Sequence[str],
    *,
    schedule: Sequence[ChaosRun] | None = None,
    schedule_seed: int = 0,
    reruns: int = 10,
    order_analysis: bool = True,
    options: Mapping[str, Any] | None = None,
) -> Preflight:
    """Classify ``target`` in ``workdir`` with one ``run_many`` call (``schedule``, or
    the plain schedule of ``schedule_seed``/``reruns``)."""
    schedule = list(schedule) if schedule is not None else make_schedule(schedule_seed, reruns)
    jobs = chaos_jobs(workdir, target, test_ids, test_paths, schedule, options=options)
    others = [t for t in test_ids if t != target]
    if order_analysis:
        jobs += [order_job(workdir, test_ids, test_paths, [target], options)]
        jobs += [order_job(workdir, test_ids, test_paths, [o, target], options) for o in others]
    results = runner.run_many(jobs)
    outcomes = rerun_outcomes(results[: len(schedule)], schedule, target, test_ids)
    first = results[0]
    collected = isinstance(first, PytestResult) and first.status is RunStatus.COMPLETED
    detail = "" if collected else f"{first.status.value}: {getattr(first, 'detail', '')}"[:300]
    order = _order_findings(results[len(schedule) :], target, others) if order_analysis else None
    return Preflight(
        collected=collected,
        calm_passed=outcomes[0].passed,
        pass_rate=sum(o.passed for o in outcomes) / len(outcomes),
        reruns=len(outcomes),
        order=order,
        detail=detail,
        outcomes=outcomes,
    )


def validate_many(runner: Any, tasks: Sequence[Task], reruns: int) -> list[dict[str, Any]]:
    """Validate scenarios in one batch: start state flaky with a passing calm run and
    passing other tests, reference p = 1.0 with every test passing calm, the mutant
    caught by the reference tests; where the task has a partial fix, its pass rate is
    strictly between the baseline and 1.0 and no anti-hack scan flags it."""
    plans: list[tuple[Task, list[tuple[str, int, int]]]] = []
    jobs: list[Any] = []
    spaces: list[Workspace] = []
    try:
        for task in tasks:
            h = FlakyHidden.of(task)
            ws = Workspace(
                task.files,
                task.editable_files,
                prefix="fg-flaky-validate-",
                data_files=task.data_files,
            )
            spaces.append(ws)
            schedule = make_schedule(h.schedule_seed, reruns)
            spans = []
            variants: dict[str, dict[str, str]] = {
                "pristine": {},
                "reference": dict(task.reference),
            }
            if h.partial:
                variants["partial"] = dict(h.partial)
            for name, files in variants.items():
                d = str(
                    ws.materialise({**{p: task.files[p] for p in task.editable_files}, **files})
                )
                start = len(jobs)
                jobs += chaos_jobs(d, h.target, h.test_ids, h.test_paths, schedule)
                spans.append((name, start, len(jobs)))
            mdir = ws.materialise({**task.reference}, h.mutant)
            start = len(jobs)
            jobs += chaos_jobs(str(mdir), h.target, h.test_ids, h.test_paths, schedule[:1])
            spans.append(("mutant", start, len(jobs)))
            plans.append((task, spans))
        results = runner.run_many(jobs)
    finally:
        for ws in spaces:
            ws.close()
    report = []
    for task, spans in plans:
        h = FlakyHidden.of(task)
        schedule = make_schedule(h.schedule_seed, reruns)
        entry: dict[str, Any] = {
            "task_id": task.task_id,
            "category": h.category,
            "template": h.template,
            "difficulty": task.difficulty,
        }
        for name, start, end in spans:
            res = results[start:end]
            if name == "mutant":
                entry["mutant_caught"] = not target_passed(res[0], h.target, 1)
                continue
            outs = rerun_outcomes(res, schedule, h.target, h.test_ids)
            entry[f"{name}_pass_rate"] = sum(o.passed for o in outs) / len(outs)
            calm = res[0]
            entry[f"{name}_calm_all"] = isinstance(calm, PytestResult) and calm.all_passed
        entry["baseline_pass_rate"] = entry.pop("pristine_pass_rate")
        entry["valid"] = bool(
            0.0 < entry["baseline_pass_rate"] < 1.0
            and entry["pristine_calm_all"]
            and entry["reference_pass_rate"] == 1.0
            and entry["reference_calm_all"]
            and entry["mutant_caught"]
        )
        if h.partial:
            # A partial fix is legitimate and strictly in between: not flagged, better
            # than the start state, still flaky.
            findings = hack_findings(task.files, {**task.files, **h.partial}, h.test_paths)
            entry["partial_flagged"] = bool(findings)
            entry["valid"] = bool(
                entry["valid"]
                and not findings
                and entry["baseline_pass_rate"] < entry["partial_pass_rate"] < 1.0
            )
        report.append(entry)
    return report


def validate_scenario(runner: Any, task: Task, reruns: int) -> dict[str, Any]:
    """:func:`validate_many` for one task."""
    return validate_many(runner, [task], reruns)[0]
