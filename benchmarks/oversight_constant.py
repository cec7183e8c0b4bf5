"""Constant policies against the Oversight oracle on both halves of a seeded split
(issue #37): every named constant a trainer would find first (always clean, always
corrupted at each confidence, a guessed location, a generic or listing explanation, a
memorised correction, a fixed trigger, all combined), the honest policies from the
oracle down to partial skill, each with its mean total and ratio to the oracle per
half; then the best of the whole constant family (call x type x generic texts x
confidence). Bar: no constant above 0.35 of the oracle on either half.

    nice -n 19 python benchmarks/oversight_constant.py --episodes 300 --seed 0

The guessed texts are the tuning half's most frequent ones (locations, spans, values,
clean answers, triggers); the held-out half judges them as constants chosen without it.
About six minutes for 300 episodes on two shared cores (``--skip-family``: two); the
oracle's and the memorised corrections' code-domain checks run in the sandbox.
"""

from __future__ import annotations

import argparse
import sys
import time

from rich.console import Console
from rich.table import Table

from forgegym.envs.oversight.constant import (
    BOUND,
    audit_constants,
    audit_named,
    sample_episodes,
)


def _named_table(rows: list, seconds: float) -> Table:
    table = Table(title=f"named policies vs the oracle ({seconds:.0f}s)")
    for column in (
        "policy",
        "kind",
        "mean tuning",
        "mean held-out",
        "ratio tuning",
        "ratio held-out",
        "confidence (t/h)",
    ):
        table.add_column(column)
    for r in rows:
        chosen = "/".join("-" if q is None else f"{q:g}" for q in r.confidences.values())
        table.add_row(
            r.policy,
            r.kind,
            f"{r.means['tuning']:.3f}",
            f"{r.means['held_out']:.3f}",
            f"{r.ratios['tuning']:.3f}",
            f"{r.ratios['held_out']:.3f}",
            chosen,
        )
    return table


def _family_table(results: list, seconds: float) -> Table:
    table = Table(title=f"best of the constant family ({seconds:.0f}s)")
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
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0, help="sample order and split seed")
    parser.add_argument(
        "--skip-family", action="store_true", help="only the named policies (faster)"
    )
    args = parser.parse_args(argv)
    console = Console(width=200)
    tasks = sample_episodes(args.episodes, seed=args.seed)
    started = time.time()
    rows = audit_named(tasks, seed=args.seed)
    console.print(_named_table(rows, time.time() - started))
    worst = max(max(r.ratios.values()) for r in rows if r.kind == "constant")
    if not args.skip_family:
        started = time.time()
        results = audit_constants(tasks, seed=args.seed)
        console.print(_family_table(results, time.time() - started))
        worst = max(worst, *(r.ratio for r in results))
    console.print(f"largest constant ratio {worst:.3f} (bar {BOUND})")
    return 0 if worst <= BOUND else 1


if __name__ == "__main__":
    sys.exit(main())
