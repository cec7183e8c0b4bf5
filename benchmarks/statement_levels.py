"""Are higher statement levels harder? A localiser that reads only the statement (issue 39).

``python benchmarks/statement_levels.py [--every 20] [--out PATH]``

For a sample of the shipped real bank (every ``--every``-th entry of each project), each
bug is told in the three statement styles (:mod:`forgegym.envs.bugfix.statements`), and
a scripted localiser ranks the project's source files by what the statement gives: a
file named by a frame location scores 100, and each identifier of the statement that the
file defines (``def``/``class``) scores 1. The rank of the mutated file (ties averaged)
measures how much of the bug's location the statement hands over; per level (the
factory's level plus the style's offset) the top-1 rate and the mean reciprocal rank
should fall as the level rises. Needs the projects unpacked or their sdists cached
(``~/.cache/forgegym``); projects that are not are skipped and counted.

The scripted policies that know the fix (``reference``, ``partial``, ``navigate``) do not
read statements, so their scores cannot tell the styles apart; this localiser is the
measurement that can.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import time
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from forgegym.envs.bugfix.real import REAL_BANK_DIR, materialise_project
from forgegym.envs.bugfix.statements import LEVEL_OFFSET, STATEMENT_STYLES, render_statement
from forgegym.tasklib.factory import ColdCacheError
from forgegym.tasklib.factory.build import read_manifest

_LOCATION = re.compile(r"^\s*(?P<path>[^\s:]+\.py):\d+:", re.MULTILINE)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


def _definitions(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def _sources(root: Path) -> dict[str, set[str]]:
    """Non-test modules of an unpacked project -> the names they define."""
    out: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        parts = rel.split("/")
        if any(p in {"tests", "test", "testing", "docs", "examples"} for p in parts[:-1]):
            continue
        if parts[-1].startswith("test_") or parts[-1] in {"conftest.py", "setup.py"}:
            continue
        out[rel] = _definitions(path.read_text(errors="replace"))
    return out


def localise_rank(statement: str, target: str, sources: dict[str, set[str]]) -> float:
    """The mutated file's rank among ``sources`` for the localiser (1 = first; ties
    averaged)."""
    named = {m["path"] for m in _LOCATION.finditer(statement)}
    words = set(_IDENTIFIER.findall(statement))
    scores = {
        path: 100.0 * any(path.endswith(n) or n.endswith(path) for n in named) + len(words & names)
        for path, names in sources.items()
    }
    mine = scores.get(target, 0.0)
    above = sum(s > mine for s in scores.values())
    ties = sum(s == mine for s in scores.values()) - (target in scores)
    return 1.0 + above + ties / 2.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=20, help="every N-th entry per project")
    parser.add_argument("--out", default="benchmarks/results/statement_levels.json")
    args = parser.parse_args()
    console = Console()
    start = time.monotonic()
    ranks: dict[str, list[float]] = defaultdict(list)
    by_level: dict[int, list[float]] = defaultdict(list)
    skipped: list[str] = []
    for manifest in sorted(REAL_BANK_DIR.glob("*.jsonl.gz")):
        entries = read_manifest(manifest)[:: args.every]
        try:
            root = materialise_project(entries[0], allow_download=False)
        except (ColdCacheError, ValueError, OSError) as exc:
            skipped.append(f"{manifest.name}: {type(exc).__name__}")
            continue
        sources = _sources(root)
        for entry in entries:
            for style in STATEMENT_STYLES:
                title, description = render_statement(entry, style)
                rank = localise_rank(f"{title}\n{description}", entry["file"], sources)
                ranks[style].append(rank)
                by_level[int(entry["level"]) + LEVEL_OFFSET[style]].append(rank)

    def row(values: list[float]) -> dict[str, float]:
        return {
            "n": len(values),
            "top1": sum(r <= 1.0 for r in values) / len(values),
            "mrr": statistics.fmean(1.0 / r for r in values),
            "median_rank": statistics.median(values),
        }

    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "every": args.every,
        "styles": {s: row(ranks[s]) for s in STATEMENT_STYLES if ranks[s]},
        "levels": {str(lv): row(by_level[lv]) for lv in sorted(by_level)},
        "skipped": skipped,
        "seconds": round(time.monotonic() - start, 1),
    }
    for title, key in (("statement style", "styles"), ("level", "levels")):
        table = Table(title=f"localiser reading the statement, by {title}")
        for column in (title, "bugs", "top-1", "MRR", "median rank"):
            table.add_column(column)
        for name, r in result[key].items():
            table.add_row(
                name, str(r["n"]), f"{r['top1']:.2f}", f"{r['mrr']:.2f}", f"{r['median_rank']:.1f}"
            )
        console.print(table)
    if skipped:
        console.print(f"skipped (not cached): {skipped}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
