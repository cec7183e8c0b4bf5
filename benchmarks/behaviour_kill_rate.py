"""Independent-mutant kill rate of the real bank's behaviour checks.

For a seeded sample of real-bank tasks whose behaviour checks grade (``--per-project``
per project, the sample of ``real_behaviour.py``), the pristine function is mutated with
the independent operator set (:mod:`forgegym.tasklib.operators`: relational, constant,
order, default, swap, drop_else; written apart from the factory's operators), at most
``--mutants`` per task. Each mutant runs, in the sandbox, the test files of the task's
fail-to-pass and pass-to-pass tests, and the task's behaviour calls. A mutant the tests
miss (every one of those tests passes) is *caught* by the behaviour checks when some
call's outcome differs from the pristine one. Equivalent mutants are counted as missed
too, so the rate is a lower bound.

Usage::

    python benchmarks/behaviour_kill_rate.py --per-project 2 --mutants 4 --seed 0 \
        --out benchmarks/results/behaviour_kill_rate.json
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import forgegym  # noqa: F401  (registers the ids)
from forgegym.envs.bugfix.behaviour import BehaviourChecks, call_job, compare
from forgegym.envs.bugfix.real import RealTaskBank
from forgegym.sandbox.jobs import CallResult, ProjectRun, PytestJob, PytestResult
from forgegym.sandbox.runners import get_default_runner
from forgegym.sandbox.workspace import Workspace
from forgegym.tasklib.operators import mutants

sys.path.insert(0, str(Path(__file__).parent))
from real_behaviour import sample  # noqa: E402


def _function_dump(source: str, qualname: str) -> str | None:
    try:
        node: Any = ast.parse(source)
    except SyntaxError:
        return None
    for part in qualname.split("."):
        node = next(
            (
                n
                for n in getattr(node, "body", [])
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name == part
            ),
            None,
        )
        if node is None:
            return None
    return ast.dump(node)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-project", type=int, default=2)
    parser.add_argument("--sample-per-project", type=int, default=5)
    parser.add_argument("--mutants", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tasks", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    bank = RealTaskBank()
    runner = get_default_runner()
    rng = random.Random(args.seed)
    taken: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    start = time.time()
    for task_id in sample(bank, args.sample_per_project, args.seed):
        entry = bank.entry(task_id)
        if taken.get(entry["project"], 0) >= args.per_project:
            continue
        if sum(taken.values()) >= args.max_tasks:
            break
        task = bank.get(task_id)
        checks = BehaviourChecks.model_validate(task.hidden["behaviour"])
        if not checks.active:
            continue
        taken[entry["project"]] = taken.get(entry["project"], 0) + 1
        path = entry["file"]
        pristine = task.reference[path]
        before = _function_dump(pristine, checks.qualname)
        inside = [
            m
            for m in mutants(pristine)
            if _function_dump(m.source, checks.qualname) not in (None, before)
        ]
        chosen = rng.sample(inside, min(args.mutants, len(inside)))
        tests = sorted(dict.fromkeys([*entry["f2p"], *entry["p2p"]]))
        files = sorted({t.partition("::")[0] for t in tests})
        project = ProjectRun.model_validate(task.metadata["project_run"])
        for mutant in chosen:
            space = Workspace({**task.files, path: mutant.source}, (), prefix="fg-kill-")
            try:
                workdir = str(space.materialise({}))
                pytest_job = PytestJob(
                    workdir=workdir,
                    targets=files,
                    timeout_s=float(task.metadata["time_limit_s"]),
                    project=project,
                    conftest=True,
                    python_hash_seed=0,
                )
                ran, called = runner.run_many([pytest_job, call_job(workdir, checks, project)])
            finally:
                space.close()
            assert isinstance(ran, PytestResult) and isinstance(called, CallResult)
            verdicts = ran.verdicts
            missed = all(verdicts.get(t, False) for t in tests)
            verdict = compare(checks, called)
            rows.append(
                {
                    "id": task_id,
                    "project": entry["project"],
                    "mutant": mutant.site.label(),
                    "tests_miss": missed,
                    "behaviour_catches": verdict.matched < verdict.total,
                }
            )
        print(
            f"[{time.time() - start:.0f}s] {task_id}: {len(chosen)} mutants, "
            f"{sum(r['tests_miss'] for r in rows if r['id'] == task_id)} missed by the tests",
            file=sys.stderr,
            flush=True,
        )
        if args.out is not None:  # partial results survive an interrupted run
            _write(args.out, _summary(rows, start), rows)
    summary = _summary(rows, start)
    print(json.dumps(summary, indent=1))
    if args.out is not None:
        _write(args.out, summary, rows)
    return 0


def _write(out: Path, summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))


def _summary(rows: list[dict[str, Any]], start: float) -> dict[str, Any]:
    missed = [r for r in rows if r["tests_miss"]]
    return {
        "tasks": len({r["id"] for r in rows}),
        "projects": len({r["project"] for r in rows}),
        "mutants": len(rows),
        "missed_by_tests": len(missed),
        "caught_by_behaviour": sum(r["behaviour_catches"] for r in missed),
        "kill_rate": round(sum(r["behaviour_catches"] for r in missed) / len(missed), 4)
        if missed
        else None,
        "caught_by_behaviour_of_all": sum(r["behaviour_catches"] for r in rows),
        "seconds": round(time.time() - start, 1),
    }


if __name__ == "__main__":
    raise SystemExit(main())
