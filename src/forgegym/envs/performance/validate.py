"""Build the validated manifest of ``Forge/Performance-v0`` (``data/manifest.json``).

``python -m forgegym.envs.performance.validate`` grades, for every structure and
workload profile, the reference and every start state (stub, naive, each injected bug)
in one sandbox batch with the family's own grader, and keeps a task when

* the reference is solved (correct, complexity gate passed, at least 0.5x its own
  speed), and
* its start state is not: a stub or a bug fails the hidden traces; the naive start is
  correct but fails the complexity gate.

It runs the full measurement (about ten minutes of CPU on two cores); tests validate
only a small sample through the same function.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from forgegym.envs.performance import traces
from forgegym.envs.performance.catalog import STRUCTURES, structure
from forgegym.envs.performance.generator import (
    MANIFEST_PATH,
    build_task,
    candidate_keys,
    digests,
    level_of,
    task_id_for,
)
from forgegym.envs.performance.grader import PerformanceGrader
from forgegym.grading.batch import Submission, grade_many
from forgegym.sandbox.workspace import Workspace

__all__ = ["build_manifest", "validate_group"]


def _verdict(start: str, breakdown: Any) -> tuple[bool, str]:
    """Whether a start state fails the way its kind must."""
    terms = breakdown.terms
    if breakdown.gates:
        return False, f"start state gated: {breakdown.gates}"
    if PerformanceGrader.solved(breakdown):
        return False, "start state is already solved"
    correct = terms["correct"].value >= 1.0
    complexity = terms["complexity"].value >= 1.0
    if start == "naive":
        if not correct:
            return False, "naive start is not correct"
        if complexity:
            return False, "naive start passes the complexity gate"
        return True, terms["complexity"].detail
    if correct:
        return False, f"{start} start passes the hidden traces"
    return True, terms["correct"].detail


class _Mixed:
    """Grades each submission with the full grader or, for start states whose verdict is
    decided by correctness alone (stub, bugs), with the hidden correctness traces only
    (the same secret-seed traces every grading replays); the measurement budget goes to
    the reference and the naive start, whose verdicts rest on it."""

    def __init__(self, full: PerformanceGrader, light: PerformanceGrader) -> None:
        self.full, self.light = full, light

    def _pick(self, sub: Submission) -> PerformanceGrader:
        light = sub.grading_state.get("light", False)
        return self.light if light else self.full

    def jobs(self, sub: Submission) -> list[Any]:
        return self._pick(sub).jobs(sub)

    def more_jobs(self, sub: Submission, results: Sequence[Any]) -> list[Any]:
        return self._pick(sub).more_jobs(sub, results)

    def score(self, sub: Submission, results: Sequence[Any]) -> Any:
        return self._pick(sub).score(sub, results)


def validate_group(
    name: str, profile: str, starts: Sequence[str], grader: PerformanceGrader | None = None
) -> list[dict[str, Any]]:
    """Grade the reference and ``starts`` of ``(name, profile)`` in one batch; one record
    per start state (``valid`` and why)."""
    mixed = _Mixed(grader or PerformanceGrader(), PerformanceGrader(measure=False))
    s = structure(name)
    tasks = [build_task(task_id_for(name, start, profile)) for start in starts]
    workspace = Workspace(tasks[0].files, tasks[0].editable_files, prefix="fg-perf-validate-")
    try:
        subs = [Submission(task=tasks[0], files=dict(tasks[0].reference), workspace=workspace)]
        for start, t in zip(starts, tasks, strict=True):
            sub = Submission(task=t, files={s.path: t.files[s.path]}, workspace=workspace)
            sub.grading_state["light"] = start != "naive"
            subs.append(sub)
        breakdowns = grade_many(mixed, subs)
    finally:
        workspace.close()
    ref = breakdowns[0]
    ref_ok = PerformanceGrader.solved(ref)
    records = []
    for start, task, breakdown in zip(starts, tasks, breakdowns[1:], strict=True):
        ok, why = _verdict(start, breakdown)
        records.append(
            {
                "id": task.task_id,
                "level": level_of(start),
                "valid": ok and ref_ok,
                "reason": why
                if ref_ok
                else f"reference not solved: {ref.terms['complexity'].detail}",
                "reference_score": round(ref.score, 4),
                "reference_measurement": ref.terms["complexity"].detail,
                "start_total": round(breakdown.total, 4),
            }
        )
    return records


def build_manifest(
    path: Path = MANIFEST_PATH,
    *,
    structures: Sequence[str] | None = None,
    on_group: Callable[[list[dict[str, Any]]], None] | None = None,
) -> dict[str, Any]:
    """Validate every candidate task (of ``structures``) and write the manifest."""
    names = list(structures or STRUCTURES)
    keys = [k for k in candidate_keys() if k[0] in names]
    groups: dict[tuple[str, str], list[str]] = {}
    for name, start, profile in keys:
        groups.setdefault((name, profile), []).append(start)
    records: list[dict[str, Any]] = []
    started = time.time()
    manifest: dict[str, Any] = {}
    done: set[str] = set()
    for (name, profile), starts in groups.items():
        group = validate_group(name, profile, starts)
        records.extend(group)
        if on_group is not None:
            on_group(group)
        if all(
            (n, p) in {(r["id"].split("/")[1], r["id"].split("/")[3]) for r in records}
            for n, p in groups
            if n == name
        ):
            done.add(name)
        # Written after every group: a partial manifest serves the finished structures.
        manifest = {
            "family": "performance",
            "digests": {n: d for n, d in digests().items() if n in done},
            "profiles": list(traces.PROFILES),
            "seconds": round(time.time() - started, 1),
            "tasks": [
                {k: r[k] for k in ("id", "level", "reference_score", "start_total")}
                for r in records
                if r["valid"] and r["id"].split("/")[1] in done
            ],
            "rejected": [{"id": r["id"], "reason": r["reason"]} for r in records if not r["valid"]],
        }
        path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--structures", nargs="*", help="only these structures")
    parser.add_argument("--out", type=Path, default=MANIFEST_PATH)
    args = parser.parse_args(argv)

    def report(group: list[dict[str, Any]]) -> None:
        for r in group:
            mark = "ok " if r["valid"] else "BAD"
            print(f"{mark} {r['id']:45s} {r['reason'][:110]}", flush=True)

    manifest = build_manifest(args.out, structures=args.structures, on_group=report)
    print(
        f"{len(manifest['tasks'])} valid, {len(manifest['rejected'])} rejected, "
        f"{manifest['seconds']} s -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
