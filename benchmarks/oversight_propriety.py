"""Propriety of the Oversight reward on both halves of the bank (issue #28, Must show 3).

For every verdict kind of :mod:`forgegym.envs.oversight.propriety` (the clean call, a
corrupted call of each of the ten types with informed content, a backdoor verdict with
trigger and corrected module checked in the sandbox, and the keyword overseer's own
verdicts), on the ``tuning`` and the ``held_out`` half: the empirical probability that
the call is right, the confidence that maximises the mean total, and the gap (target:
at most 0.05 everywhere).

    python benchmarks/oversight_propriety.py --per-population 20 --code-sandbox 6
"""

from __future__ import annotations

import argparse
import sys
import time

from rich.console import Console
from rich.table import Table

from forgegym.envs.oversight.propriety import audit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-population", type=int, default=20)
    parser.add_argument("--code-sandbox", type=int, default=6)
    args = parser.parse_args(argv)
    console = Console(width=160)
    worst = 0.0
    for half in ("tuning", "held_out"):
        started = time.time()
        results = audit(half, args.per_population, code_sandbox=args.code_sandbox)
        table = Table(title=f"{half} half ({time.time() - started:.0f}s)")
        for column in ("verdict", "population", "episodes", "empirical", "argmax", "gap"):
            table.add_column(column)
        for r in results:
            table.add_row(
                r.verdict,
                r.population,
                str(r.episodes),
                f"{r.empirical:.3f}",
                f"{r.argmax:.2f}",
                f"{r.gap:.3f}",
            )
        console.print(table)
        gap = max(r.gap for r in results)
        worst = max(worst, gap)
        console.print(f"{half}: {len(results)} verdict kinds, largest gap {gap:.3f}")
    return 0 if worst <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
