"""The real bank's report: projects, versions, licences and per-project build statistics.

Reads a bank folder (default: the shipped one) and ``catalog.json`` (the licences) and
prints two Markdown tables: the projects with their pins and licences, and the build's
per-project throughput and keep share (``forgegym.tasklib.factory.build.stats_table``).
It also checks the bank's composition rules: issue 27's (at least 5,000 tasks from 25
projects, none above 15%), and prints where issue 39's stand (12,000 tasks from 60
projects, none above 6%, every licence recorded).

Usage::

    python benchmarks/real_bank/report.py [BANK_DIR]
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from forgegym.envs.bugfix.real import REAL_BANK_DIR
from forgegym.tasklib.factory.build import read_manifest, stats_table

CATALOG = Path(__file__).with_name("catalog.json")


def projects_table(bank: Path) -> tuple[str, dict[str, int]]:
    licences = {(p["name"], p["version"]): p["license"] for p in json.loads(CATALOG.read_text())}
    counts: dict[str, int] = {}
    rows = [
        "| project | version | licence | sdist sha256 | tasks | share |",
        "|---|---|---|---|---|---|",
    ]
    records = sorted(bank.glob("*.project.json"))
    for path in records:
        record = json.loads(path.read_text())
        name, version = record["project"], record["version"]
        # single mutants and the kinds built on them (composed, reverted fixes)
        counts[f"{name}=={version}"] = sum(
            len(read_manifest(m)) for m in sorted(bank.glob(f"{name}-{version}.*jsonl.gz"))
        )
    total = sum(counts.values())
    for path in records:
        record = json.loads(path.read_text())
        name, version = record["project"], record["version"]
        n = counts[f"{name}=={version}"]
        licence = record.get("licence") or licences.get((name, version), "see its sdist")
        rows.append(
            f"| {name} | {version} | {licence} | `{record['sha256'][:16]}…` | {n} | "
            f"{n / total:.1%} |"
        )
    rows.append(f"| **{len(records)} projects** | | | | **{total}** | |")
    return "\n".join(rows) + "\n", counts


def kinds_levels_table(bank: Path) -> str:
    """Tasks per kind (a manifest entry's ``kind``, ``mutant`` when absent, as the env's
    ``metadata["kind"]``) and level, with totals."""
    counts: Counter[tuple[str, int]] = Counter()
    for manifest in sorted(bank.glob("*.jsonl.gz")):
        for entry in read_manifest(manifest):
            counts[entry.get("kind", "mutant"), int(entry["level"])] += 1
    kinds = sorted({kind for kind, _ in counts}, key=lambda kind: (kind != "mutant", kind))
    levels = sorted({level for _, level in counts})
    rows = [
        "| kind | " + " | ".join(f"level {level}" for level in levels) + " | tasks |",
        "|---|" + "---|" * (len(levels) + 1),
    ]
    for kind in kinds:
        cells = [counts[kind, level] for level in levels]
        rows.append(f"| {kind} | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    totals = [sum(counts[kind, level] for kind in kinds) for level in levels]
    rows.append("| **all** | " + " | ".join(map(str, totals)) + f" | **{sum(totals)}** |")
    return "\n".join(rows) + "\n"


def main() -> int:
    bank = Path(sys.argv[1]) if len(sys.argv) > 1 else REAL_BANK_DIR
    table, counts = projects_table(bank)
    print(table)
    print(stats_table(bank))
    print(kinds_levels_table(bank))
    total = sum(counts.values())
    largest = max(counts.values(), default=0)
    print(
        f"{total} tasks from {len(counts)} projects; the largest share {largest / total:.1%}"
        if total
        else "empty bank"
    )
    stats = [json.loads(path.read_text()) for path in sorted(bank.glob("*.stats.json"))]
    cpu_minutes = sum(s["cpu_seconds"] for s in stats) / 60
    confirmed = sum(s["confirmed"] for s in stats)
    print(
        f"issue 39: {total}/12000 tasks, {len(counts)}/60 projects, largest share "
        f"{largest / max(total, 1):.1%} (at most 6%), built at "
        f"{confirmed / max(cpu_minutes, 1e-9):.1f} tasks per CPU-minute (at least 35.7)"
    )
    return 0 if total >= 5000 and len(counts) >= 25 and largest <= 0.15 * total else 1


if __name__ == "__main__":
    raise SystemExit(main())
