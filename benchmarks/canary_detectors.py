"""How well can a policy tell canaries from tasks without solving them? (issue #37)

``python benchmarks/canary_detectors.py [--n 60] [--families bugfix,refactor,...,real]``

Per family: ``--n`` canaries against ``--n`` tasks of the default bank, scored by the
primary detector and the held-out one (:mod:`forgegym.tasklib.canary_detect`), each
with the ids ``info`` carries and without them (a TRL policy never sees ids; a served
one does). ``real``: Bugfix's real bank, its canaries built fresh on its tasks as
``canary_rate`` builds them (design note 006, D4); its visible tests are not run here
(a real project's tests need its own environment; the primary detector then reads the
statement and the test files only), nor are the canaries validated in the sandbox as
the canary stream validates them (``benchmarks/real_canaries.py`` measures how many
pass). A third column, ``eligibility``, scores
:func:`~forgegym.tasklib.canary_detect.eligibility_detector`: "a canary when the task
could carry one" (the family's ``plan``), the bound on any detector that learns which
tasks canaries are built on (``--eligibility-only``: that column alone, without
resetting or running anything; the other columns of the family's row are kept).
``--eligible-rows``: the tasks are drawn as ``make_dataset(..., canary_rate>0)`` draws
its other rows, among those that can carry a canary (design note 006, D7); the row
is stored as ``<family>, eligible rows``. Chance is 0.50; the issue's bar is 0.60. Results
go to ``benchmarks/results/canary_detectors.json`` (a family's row is replaced, the
others kept).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from forgegym.tasklib.canary_detect import (
    accuracy,
    collect,
    eligibility_detector,
    heldout_detector,
    primary_detector,
    primary_without_ids,
)

ENV_IDS = {
    "bugfix": "Forge/Bugfix-v0",
    "refactor": "Forge/Refactor-v0",
    "flaky": "Forge/FlakyRepair-v0",
    "performance": "Forge/Performance-v0",
    "oversight": "Forge/Oversight-v0",
    "real": "Forge/Bugfix-v0",
}


def _collect(
    family: str, n: int, log: Any, observe: bool = True, eligible_rows: bool = False
) -> list[Any]:
    if family != "real":
        return collect(
            family, ENV_IDS[family], n, observe=observe, log=log, eligible_rows=eligible_rows
        )
    from forgegym.envs.bugfix.real import RealTaskBank

    # Without behaviour checks (parent-side grading data, never shown): the observation
    # is the same and nothing runs in the sandbox at a task's first use.
    bank = RealTaskBank(behaviour=False)
    return collect(
        "bugfix",
        ENV_IDS[family],
        n,
        env_kwargs={"task_bank": bank},
        run_tests=False,
        # The plan's canaries: the sandbox check the canary stream runs on each (two
        # runs of the project's suite) is measured apart (benchmarks/real_canaries.py).
        validated=False,
        observe=observe,
        eligible_rows=eligible_rows,
        log=log,
    )


RESULTS = Path(__file__).parent / "results" / "canary_detectors.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--families", default=",".join(ENV_IDS))
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--eligibility-only", action="store_true")
    parser.add_argument("--eligible-rows", action="store_true")
    args = parser.parse_args()
    console = Console(width=140)
    table = Table(title=f"Canary detectors: {args.n} canaries vs {args.n} tasks per family")
    columns = ("primary", "primary_no_ids", "heldout", "heldout_no_ids", "eligibility")
    for column in (
        "family",
        "primary",
        "primary, no ids",
        "held-out",
        "held-out, no ids",
        "eligibility",
    ):
        table.add_column(column, justify="left" if column == "family" else "right")
    out: dict[str, dict[str, float]] = (
        json.loads(args.out.read_text()) if args.out.is_file() else {}
    )
    for family in [f for f in args.families.split(",") if f]:
        start = time.perf_counter()
        samples = _collect(
            family,
            args.n,
            console.print,
            observe=not args.eligibility_only,
            eligible_rows=args.eligible_rows,
        )
        key = f"{family}, eligible rows" if args.eligible_rows else family
        if args.eligibility_only:
            kept = out.get(key, {})
            kept["eligibility"] = accuracy(samples, [eligibility_detector(s) for s in samples])
            out[key] = kept
            table.add_row(key, *(f"{kept[k]:.2f}" if k in kept else "-" for k in columns))
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(out, indent=1) + "\n")
            continue
        row = {
            "primary": accuracy(samples, [primary_detector(s) for s in samples]),
            "primary_no_ids": accuracy(samples, [primary_without_ids(s) for s in samples]),
            "heldout": accuracy(samples, heldout_detector(samples)),
            "heldout_no_ids": accuracy(samples, heldout_detector(samples, use_ids=False)),
            "eligibility": accuracy(samples, [eligibility_detector(s) for s in samples]),
            "seconds": time.perf_counter() - start,
        }
        out[key] = row
        table.add_row(
            key,
            *(f"{row[k]:.2f}" for k in columns),
        )
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    console.print(table)


if __name__ == "__main__":
    main()
