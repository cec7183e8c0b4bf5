"""GRPO grading throughput per family: ``python benchmarks/throughput.py [--env ID]...
[--tasks 16] [--group 8] [--mix issue|distinct] [--workers 1 --workers 2] [--repeats 1]
[--json]``.

The same measurement as ``forgegym bench --throughput`` (see
:mod:`forgegym.bench.throughput`): completions/s with one worker and with the default
pool, parallel efficiency (wall-clock, and CPU-implied from the parent's serial CPU),
CPU per completion, and the parent's phases vs the sandbox jobs, for the optimised and
the reference grading paths; each measurement in a fresh process.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from forgegym.bench.throughput import bench_throughput


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", action="append", help="env id (repeatable; default: all)")
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--mix", choices=("issue", "distinct"), default="issue")
    parser.add_argument("--workers", type=int, action="append", help="pool sizes")
    parser.add_argument("--repeats", type=int, default=1, help="alternating measurements")
    parser.add_argument("--no-reference", action="store_true", help="optimised path only")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    result = bench_throughput(
        args.env,
        tasks=args.tasks,
        group=args.group,
        mix=args.mix,
        workers=args.workers,
        reference=not args.no_reference,
        repeats=args.repeats,
        show=not args.json,
    )
    if args.json:
        out = dataclasses.asdict(result)
        out["summary"] = [dataclasses.asdict(s) for s in result.summary()]
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
