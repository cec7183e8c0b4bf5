"""Benchmark the sandbox runners: ``python benchmarks/runner.py [--runs 30] [--many 16]``."""

from __future__ import annotations

import argparse
import json

from forgegym.bench.runner import print_runner_bench, run_runner_bench


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--many", type=int, default=16)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    bench = run_runner_bench(runs=args.runs, many=args.many, workers=args.workers)
    if args.json:
        print(json.dumps(bench.model_dump(), indent=2))
    else:
        print_runner_bench(bench)


if __name__ == "__main__":
    main()
