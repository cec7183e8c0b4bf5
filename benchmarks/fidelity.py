"""Sandbox fidelity benchmark (issue 36): idioms real projects use, host against sandbox.

    python benchmarks/fidelity.py [--corpus PATH] [--per-file] [--declared-deps] [--json OUT]

Runs the idiom corpus (default ``tests/fixtures/repos/idioms``: one module with code at
import and one test per idiom) as repository mode runs a user's project, and as a plain
pytest run on the host, and prints one row per idiom: host outcome, sandbox outcome,
whether they agree and, where not, repository mode's cause. The bar is 39 of 40 agree.
``--declared-deps`` installs the corpus's declared dependencies into a cached
environment (network on first use) instead of using forgegym's own environment.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from forgegym.envs.bugfix.fidelity import measure

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / "tests" / "fixtures" / "repos" / "idioms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument(
        "--no-deps",
        action="store_true",
        help="install none of the corpus's declared test dependencies (a diagnosis)",
    )
    parser.add_argument(
        "--per-file", action="store_true", help="one sandbox job per idiom (a diagnosis)"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    report = measure(
        args.corpus,
        test_dependencies=() if args.no_deps else None,
        per_file=args.per_file,
    )
    print(report.table())
    if args.json is not None:
        args.json.write_text(json.dumps(report.to_json(), indent=1) + "\n")
    return 0 if report.agreeing >= report.total - 1 else 1


if __name__ == "__main__":
    sys.exit(main())
