"""Cap one project's single-mutant tasks, so no project is above the bank's share bar.

``python benchmarks/real_bank/cap_project.py BANK_DIR NAME --keep N [--seed 0]``

Issue 39 asks that no project hold more than 6% of the real bank. A project over it keeps
``N`` of its built single-mutant tasks: those its composed tasks pair, then a seeded
shuffle of the others' sorted ids (the same bank, ``N`` and seed keep the same tasks); the rest are dropped, never padded
around. The project record gains ``capped`` (how many were kept of how many, the rule and
the seed) and the statistics ``capped`` (how many were dropped), with ``confirmed`` the
tasks kept. Its composed and reverted-fix tasks are separate manifests and stay.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from forgegym.tasklib.factory.compose import is_main_manifest
from forgegym.tasklib.factory.manifest import read_manifest, write_manifest


def cap_project(bank_dir: Path, name: str, keep: int, seed: int = 0) -> tuple[int, int]:
    """Keep ``keep`` of project ``name``'s single-mutant tasks; returns (kept, built)."""
    (manifest,) = [m for m in bank_dir.glob(f"{name}-*.jsonl.gz") if is_main_manifest(m)]
    entries = read_manifest(manifest)
    if keep >= len(entries):
        return len(entries), len(entries)
    # the single mutants its composed tasks pair are kept first: a composed task names them
    composed = bank_dir / manifest.name.replace(".jsonl.gz", ".multi.jsonl.gz")
    paired = {
        part
        for entry in (read_manifest(composed) if composed.exists() else [])
        for part in entry["id"].split("/", 4)[4].split("+")
    }
    pinned = sorted(e["id"] for e in entries if e["id"].split("/", 3)[3] in paired)
    ids = sorted(entry["id"] for entry in entries if entry["id"] not in set(pinned))
    random.Random(seed).shuffle(ids)
    kept_ids = set(pinned) | set(ids[: max(keep - len(pinned), 0)])
    kept = [entry for entry in entries if entry["id"] in kept_ids]
    write_manifest(manifest, kept)
    stem = manifest.name.removesuffix(".jsonl.gz")
    record_path = bank_dir / f"{stem}.project.json"
    stats_path = bank_dir / f"{stem}.stats.json"
    record = json.loads(record_path.read_text())
    stats = json.loads(stats_path.read_text())
    built = len(entries) + int(record.get("capped", {}).get("dropped", 0))
    record["capped"] = {
        "kept": keep,
        "of": built,
        "dropped": built - keep,
        "seed": seed,
        "rule": "issue 39: no project above 6% of the bank; kept the mutants its composed "
        "tasks pair, then the first of its other sorted task ids shuffled by "
        "random.Random(seed)",
    }
    stats["capped"] = built - keep
    stats["confirmed"] = keep
    record_path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    stats_path.write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")
    return keep, built


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bank_dir", type=Path)
    parser.add_argument("name", help="the project's name as in its manifest")
    parser.add_argument("--keep", type=int, required=True, help="single-mutant tasks kept")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    kept, built = cap_project(args.bank_dir, args.name, args.keep, args.seed)
    print(f"{args.name}: kept {kept} of {built} single-mutant tasks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
