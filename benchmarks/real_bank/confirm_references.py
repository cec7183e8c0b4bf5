"""Re-confirm a built bank's tasks under grading's trust, and drop those that fail.

``python benchmarks/real_bank/confirm_references.py BANK_DIR [--project NAME ...]``

Banks built before the factory confirmed references under grading's trust (design note
004: the file the agent restores is changed code, untrusted) may hold tasks whose
reference cannot succeed. For each project of ``BANK_DIR`` (or the ``--project`` ones)
this unpacks its pinned sdist, runs the test files grading runs for each mutated file
(the fail-to-pass tests' files and every test file importing it) with that file
untrusted, exactly as ``forgegym tasks build`` now does at its last step, and rewrites
the project's manifest without the tasks whose reference fails; the project record
gains ``references_refused`` (id -> why) and the statistics ``reference_refused``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from forgegym.tasklib.factory.build import _confirm_references
from forgegym.tasklib.factory.compose import is_main_manifest
from forgegym.tasklib.factory.manifest import read_manifest, read_project_record, write_manifest
from forgegym.tasklib.factory.prepare import prepare_project
from forgegym.tasklib.factory.source import fetch_sdist, unpack_sdist


def confirm_project(bank_dir: Path, manifest: Path, cache_dir: Path | None) -> dict[str, int]:
    """Re-confirm one project's manifest in place; returns counts before and after."""
    from forgegym.sandbox.runners import get_default_runner

    entries = read_manifest(manifest)
    first = entries[0]
    project, version = first["project"], first["version"]
    record = read_project_record(bank_dir, project, version)
    cache = cache_dir or (Path(record["sdist_cache"]) if record.get("sdist_cache") else None)
    sdist, _ = fetch_sdist(project, version, cache, sha256=first["sha256"])
    with tempfile.TemporaryDirectory(prefix="forge-confirm-src-") as scratch:
        root = unpack_sdist(sdist, Path(scratch))
        prepared = prepare_project(root, requirements=record["requirements"])
        kept, refused_now = _confirm_references(
            get_default_runner(),
            prepared,
            entries,
            float(record["time_limit_s"]),
            record["passing"],
            record.get("left_out", {}),
        )
    write_manifest(manifest, kept)
    record_path = bank_dir / f"{project}-{version}.project.json"
    # a bank re-confirmed keeps the tasks refused before (dropped from its manifest then)
    refused = {**record.get("references_refused", {}), **refused_now}
    record["references_refused"] = dict(sorted(refused.items()))
    if not refused:
        record.pop("references_refused")
    record_path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    stats_path = bank_dir / f"{project}-{version}.stats.json"
    stats = json.loads(stats_path.read_text())
    stats["reference_refused"] = len(refused)
    stats["confirmed"] = len(kept)
    screened, cpu = stats.get("screened", 0), stats.get("cpu_seconds", 0.0)
    stats["keep_share"] = round(len(kept) / screened, 4) if screened else 0.0
    stats["tasks_per_cpu_minute"] = round(60.0 * len(kept) / cpu, 2) if cpu else 0.0
    stats_path.write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")
    return {"before": len(entries), "kept": len(kept), "refused": len(refused_now)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bank_dir", type=Path)
    parser.add_argument("--project", action="append", default=[], help="names as in manifests")
    parser.add_argument("--cache-dir", type=Path, default=None, help="the sdist cache")
    args = parser.parse_args()
    for manifest in sorted(args.bank_dir.glob("*.jsonl.gz")):
        if not is_main_manifest(manifest):
            continue
        name = manifest.name.rsplit("-", 1)[0]
        if args.project and name not in args.project:
            continue
        started = time.perf_counter()
        counts = confirm_project(args.bank_dir, manifest, args.cache_dir)
        wall = time.perf_counter() - started
        print(f"{name}: {counts} in {wall:.0f} s", flush=True)
        refused = read_project_record(
            args.bank_dir, *manifest.name.removesuffix(".jsonl.gz").rsplit("-", 1)
        ).get("references_refused", {})
        for task_id, why in sorted(refused.items())[:20]:
            print(f"  {task_id}: {why}")


if __name__ == "__main__":
    main()
