"""Precision of repository mode's static anti-hack scans on real upstream bug fixes.

``python benchmarks/upstream_fixes.py [--split tuning|heldout] [--out FILE]`` scans the
corpus; ``python benchmarks/upstream_fixes.py --extract`` (re)builds it from git mirrors.

The corpus (``tests/rewards/antihack/upstream_fixes/<project>_<sha7>.json``) holds bug
fixes taken from the histories of public Python projects (:data:`CASES`: a repository
and a commit whose message calls it a fix, with a small change of one or two source
modules and a test added or changed with it). Each case records the project, its
licence, the commit (sha, URL, first line of the message), its split, the changed
source files before and after the commit and the changed test files after it.

Scanned as repository mode scans an agent's patch
(:func:`forgegym.envs.bugfix.repo.repo_patch_findings`: the shared scans of the patch,
the verbatim test-constant scan and the special-casing scan; no trusted reference, the
visible tests being the commit's test files), an upstream fix is the honest answer, so
any finding is a false positive of a scan.

Cases are split by project (:func:`split_of`: the sorted projects shuffled with
:data:`SEED`, the first half ``tuning``, the rest ``heldout``): scan rules are tuned on
the first half and reported on both.

``--extract`` reads each repository from ``/work/.mirror/<owner>+<name>/repo`` (a bare
clone; ``--mirrors`` to point elsewhere), resolves the commit, and writes the files of
the commit and its first parent. ``load_cases`` and ``scan_case`` are what
``tests/rewards/antihack/test_upstream_fixes.py`` uses.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgegym.envs.bugfix.repo import repo_patch_findings
from forgegym.rewards.antihack import HackFinding

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "rewards" / "antihack" / "upstream_fixes"
SEED = 37

#: repository -> (project name used in case ids, licence as the repository states it)
PROJECTS: dict[str, tuple[str, str]] = {
    "Suor/funcy": ("funcy", "BSD-3-Clause"),
    "andialbrecht/sqlparse": ("sqlparse", "BSD-3-Clause"),
    "jd/tenacity": ("tenacity", "Apache-2.0"),
    "mahmoud/boltons": ("boltons", "BSD-3-Clause"),
    "more-itertools/more-itertools": ("more_itertools", "MIT"),
    "python-humanize/humanize": ("humanize", "MIT"),
    "python-semver/python-semver": ("semver", "BSD-3-Clause"),
    "pytoolz/toolz": ("toolz", "BSD-3-Clause"),
    "r1chardj0n3s/parse": ("parse", "MIT"),
    "tkem/cachetools": ("cachetools", "MIT"),
    "pallets/markupsafe": ("markupsafe", "BSD-3-Clause"),
    "pallets/itsdangerous": ("itsdangerous", "BSD-3-Clause"),
}

#: (repository, commit): fixes chosen from ``git log`` by their message ("fix", "bug",
#: an issue number) with at most two source modules and a test file changed, and a
#: diff of the source of at most 40 lines; code Python 3.11 parses (no Python 2 only
#: syntax). more-itertools has two cases only: its files are large (0.6 MB a case).
CASES: tuple[tuple[str, str], ...] = (
    ("Suor/funcy", "6c111987f2"),
    ("Suor/funcy", "e068b64005"),
    ("Suor/funcy", "4a5e9df9d6"),
    ("Suor/funcy", "7729f8da22"),
    ("Suor/funcy", "aa5c165709"),
    ("Suor/funcy", "54ed07a6a5"),
    ("Suor/funcy", "da4040a5d9"),
    ("andialbrecht/sqlparse", "f66d12c245"),
    ("andialbrecht/sqlparse", "111b35cffc"),
    ("andialbrecht/sqlparse", "5ca50a2ee9"),
    ("andialbrecht/sqlparse", "e92a032c81"),
    ("andialbrecht/sqlparse", "b126ba5b20"),
    ("andialbrecht/sqlparse", "46971e5a80"),
    ("andialbrecht/sqlparse", "e66046785b"),
    ("jd/tenacity", "c650fb4520"),
    ("jd/tenacity", "42b70f9079"),
    ("jd/tenacity", "213446e8f5"),
    ("jd/tenacity", "0bdf1d9e5f"),
    ("jd/tenacity", "a7f548520e"),
    ("mahmoud/boltons", "ec1ff9f672"),
    ("mahmoud/boltons", "c1c25da365"),
    ("mahmoud/boltons", "ead236e278"),
    ("mahmoud/boltons", "1e61524a79"),
    ("mahmoud/boltons", "4aa77cddb5"),
    ("mahmoud/boltons", "766b554739"),
    ("mahmoud/boltons", "93185b224e"),
    ("more-itertools/more-itertools", "f51a53bfd2"),
    ("more-itertools/more-itertools", "cca32949f1"),
    ("python-humanize/humanize", "823ad6096e"),
    ("python-humanize/humanize", "11e62eeedb"),
    ("python-humanize/humanize", "8705e2967e"),
    ("python-humanize/humanize", "b1ee687582"),
    ("python-humanize/humanize", "03863fed6c"),
    ("python-humanize/humanize", "2f179b6b5c"),
    ("python-semver/python-semver", "bc41390f38"),
    ("python-semver/python-semver", "4b03f867a3"),
    ("python-semver/python-semver", "f332326e54"),
    ("python-semver/python-semver", "7057dc5fde"),
    ("pytoolz/toolz", "c696ac6f3c"),
    ("pytoolz/toolz", "dd87e4f20f"),
    ("pytoolz/toolz", "3705d6ad7b"),
    ("r1chardj0n3s/parse", "421c19919f"),
    ("r1chardj0n3s/parse", "19689cf5b4"),
    ("r1chardj0n3s/parse", "db1acf8a17"),
    ("r1chardj0n3s/parse", "fe986ffabf"),
    ("r1chardj0n3s/parse", "d0fcf16bf4"),
    ("tkem/cachetools", "18e5930ced"),
    ("tkem/cachetools", "57d2e4813d"),
    ("tkem/cachetools", "430e338e3a"),
    ("tkem/cachetools", "d5ef9cc6f3"),
    ("pallets/markupsafe", "a009444908"),
    ("pallets/markupsafe", "94e9fcad7b"),
    ("pallets/markupsafe", "d11c25e2d7"),
    ("pallets/itsdangerous", "1396324345"),
    ("pallets/itsdangerous", "9981a90b46"),
)

_TEST_PATH = re.compile(r"(^|/)tests?/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)tests?\.py$")


@dataclass(frozen=True)
class UpstreamFix:
    """One stored case: an upstream commit's changed files and where it came from."""

    id: str
    project: str
    repository: str
    commit: str
    commit_url: str
    message: str
    licence: str
    split: str
    #: changed source modules as the parent commit / the fix has them
    before: dict[str, str]
    after: dict[str, str]
    #: the commit's changed test files, as the fix has them (the visible tests)
    tests: dict[str, str]


def split_of(project: str) -> str:
    """``tuning`` or ``heldout``: the sorted projects shuffled with :data:`SEED`, the
    first half (rounded up) tuning."""
    projects = sorted({name for name, _ in PROJECTS.values()})
    random.Random(SEED).shuffle(projects)
    return "tuning" if projects.index(project) < (len(projects) + 1) // 2 else "heldout"


def load_cases(corpus: Path = CORPUS) -> list[UpstreamFix]:
    """Every stored case, sorted by id."""
    return [UpstreamFix(**json.loads(path.read_text())) for path in sorted(corpus.glob("*.json"))]


def scan_case(case: UpstreamFix) -> list[HackFinding]:
    """What repository mode finds in the upstream fix, the case's tests visible."""
    return repo_patch_findings(case.before, case.after, case.tests)


def _git(mirror: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(mirror), *args], check=True, capture_output=True, text=True
    ).stdout


def extract(repository: str, commit: str, mirrors: Path) -> UpstreamFix:
    """The case of ``commit`` of ``repository`` read from its mirror."""
    mirror = mirrors / repository.replace("/", "+") / "repo"
    sha = _git(mirror, "rev-parse", "--verify", f"{commit}^{{commit}}").strip()
    paths = _git(mirror, "diff", "--name-only", "--diff-filter=AM", f"{sha}^", sha).split()
    python = [p for p in paths if p.endswith(".py")]
    tests = [p for p in python if _TEST_PATH.search(p)]
    sources = [p for p in python if p not in tests and not p.startswith(("docs/", "setup"))]
    if not 1 <= len(sources) <= 2 or not tests:
        raise ValueError(f"{repository}@{sha[:10]}: sources {sources}, tests {tests}")
    project, licence = PROJECTS[repository]
    return UpstreamFix(
        id=f"{project}_{sha[:7]}",
        project=project,
        repository=f"https://github.com/{repository}",
        commit=sha,
        commit_url=f"https://github.com/{repository}/commit/{sha}",
        message=_git(mirror, "log", "-1", "--format=%s", sha).strip(),
        licence=licence,
        split=split_of(project),
        before={p: _git(mirror, "show", f"{sha}^:{p}") for p in sources},
        after={p: _git(mirror, "show", f"{sha}:{p}") for p in sources},
        tests={p: _git(mirror, "show", f"{sha}:{p}") for p in tests},
    )


def write_corpus(mirrors: Path, corpus: Path = CORPUS) -> int:
    """(Re)write every case of :data:`CASES`; stale case files are removed."""
    corpus.mkdir(parents=True, exist_ok=True)
    for stale in corpus.glob("*.json"):
        stale.unlink()
    for repository, commit in CASES:
        case = extract(repository, commit, mirrors)
        record: dict[str, Any] = dict(case.__dict__)
        (corpus / f"{case.id}.json").write_text(json.dumps(record, indent=1) + "\n")
    return len(CASES)


def _print_table(rows: list[dict[str, Any]], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in ("case", "split", "commit message", "lines", "findings"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            row["id"],
            row["split"],
            row["message"][:60],
            str(row["changed_lines"]),
            "; ".join(row["findings"]) or "-",
        )
    Console(width=160).print(table)


def _changed_lines(case: UpstreamFix) -> int:
    import difflib

    return sum(
        1
        for path in case.after
        for line in difflib.unified_diff(
            case.before[path].splitlines(), case.after[path].splitlines(), n=0
        )
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extract", action="store_true", help="rebuild the corpus first")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--split", choices=("tuning", "heldout"), default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.extract:
        print(f"extracted {write_corpus(args.mirrors)} cases into {CORPUS}", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    for case in load_cases():
        if args.split and case.split != args.split:
            continue
        findings = scan_case(case)
        rows.append(
            {
                "id": case.id,
                "project": case.project,
                "split": case.split,
                "message": case.message,
                "changed_lines": _changed_lines(case),
                "findings": [f"{f.kind} at {f.where}: {f.detail}" for f in findings],
                "kinds": [f.kind for f in findings],
            }
        )
    _print_table(rows, "Repository mode's static scans on upstream fixes")
    summary: dict[str, Any] = {}
    for split in ("tuning", "heldout"):
        part = [r for r in rows if r["split"] == split]
        if part:
            summary[split] = {
                "cases": len(part),
                "projects": sorted({r["project"] for r in part}),
                "flagged": sum(bool(r["findings"]) for r in part),
                "by_kind": dict(Counter(k for r in part for k in set(r["kinds"]))),
            }
    print(json.dumps(summary, indent=1))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
