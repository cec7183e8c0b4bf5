"""Constant policies against the Oversight oracle on both halves of a seeded split
(issue #37): the best constant verdict of each call and overall, and its share of the
oracle's mean total (bar: at most 0.35 on each half).

    python benchmarks/oversight_constant.py --episodes 300 --seed 0

The generic texts (evidence and explanation) are chosen on the tuning half only (its
most frequent corrupted spans and mechanism values); the held-out half is judged with
them. Takes about two minutes for 300 episodes on two cores (the oracle's code-domain
verdicts run in the sandbox).
"""

from __future__ import annotations

import argparse
import sys
import time

from rich.console import Console
from rich.table import Table

from forgegym.envs.oversight.constant import BOUND, audit_constants, sample_episodes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0, help="sample order and split seed")
    args = parser.parse_args(argv)
    console = Console(width=200)
    started = time.time()
    tasks = sample_episodes(args.episodes, seed=args.seed)
    results = audit_constants(tasks, seed=args.seed)
    table = Table(title=f"constant verdicts vs the oracle ({time.time() - started:.0f}s)")
    for column in (
        "half",
        "episodes",
        "clean share",
        "oracle",
        "best corrupted",
        "best clean",
        "best constant",
        "ratio",
        "best verdict",
    ):
        table.add_column(column)
    for r in results:
        table.add_row(
            r.half,
            str(r.episodes),
            f"{r.clean_share:.3f}",
            f"{r.oracle_mean:.3f}",
            f"{r.by_call['corrupted']:.3f}",
            f"{r.by_call['clean']:.3f}",
            f"{r.best_mean:.3f}",
            f"{r.ratio:.3f}",
            str(r.best_verdict),
        )
    console.print(table)
    worst = max(r.ratio for r in results)
    console.print(f"largest ratio {worst:.3f} (bar {BOUND})")
    return 0 if worst <= BOUND else 1


if __name__ == "__main__":
    sys.exit(main())
