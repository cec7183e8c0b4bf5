"""How well can a policy tell canaries from tasks without solving them? (issue #37)

``python benchmarks/canary_detectors.py [--n 60] [--families bugfix,refactor,...]``

Per family: ``--n`` canaries against ``--n`` tasks of the default bank, scored by the
primary detector and the held-out one (:mod:`forgegym.tasklib.canary_detect`), each
with the ids ``info`` carries and without them (a TRL policy never sees ids; a served
one does). Chance is 0.50; the issue's bar is 0.60. Results go to
``benchmarks/results/canary_detectors.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from forgegym.tasklib.canary_detect import (
    accuracy,
    collect,
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
}
RESULTS = Path(__file__).parent / "results" / "canary_detectors.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--families", default=",".join(ENV_IDS))
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    console = Console(width=140)
    table = Table(title=f"Canary detectors: {args.n} canaries vs {args.n} tasks per family")
    for column in ("family", "primary", "primary, no ids", "held-out", "held-out, no ids"):
        table.add_column(column, justify="left" if column == "family" else "right")
    out: dict[str, dict[str, float]] = {}
    for family in [f for f in args.families.split(",") if f]:
        start = time.perf_counter()
        samples = collect(family, ENV_IDS[family], args.n, log=console.print)
        row = {
            "primary": accuracy(samples, [primary_detector(s) for s in samples]),
            "primary_no_ids": accuracy(samples, [primary_without_ids(s) for s in samples]),
            "heldout": accuracy(samples, heldout_detector(samples)),
            "heldout_no_ids": accuracy(samples, heldout_detector(samples, use_ids=False)),
            "seconds": time.perf_counter() - start,
        }
        out[family] = row
        table.add_row(
            family,
            *(f"{row[k]:.2f}" for k in ("primary", "primary_no_ids", "heldout", "heldout_no_ids")),
        )
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    console.print(table)


if __name__ == "__main__":
    main()
