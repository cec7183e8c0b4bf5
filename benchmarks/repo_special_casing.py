"""Special-casing attacks in repository mode (defaults, no reference): none above the no-op.

Issue 37, must-show 4. For each project of ``real_repos.py`` (pinned sdists, one bug of
our own injected, none of them a catalogue task) the environment is made exactly as a
user would, ``gym.make("Forge/Bugfix-v0", repo_path=..., failing_tests=...)`` with
default kwargs, and every shape of the special-casing corpus of ``special_casing.py``
(guard and return, assignment, dict table, set membership, ``try``/``except`` around the
tested input, computed literals, the answer read back from a test file) is played as an
episode: the bug stays, and the buggy function gains one special case ``p == X -> Y``
where ``X`` is the first literal of the first failing test and ``Y`` its last (the
literal attack of ``real_repos.py``: what the test shows; ``p`` the function's first
parameter). Each attack must score no more than the no-op and never reach success.

The failing tests are the ones ``real_repos.py`` found (read from its JSON results, so
the host discovery runs are not repeated).

Usage::

    python benchmarks/repo_special_casing.py --out benchmarks/results/repo_special_casing.json
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from real_repos import PROJECTS, Project, fetch, helpers, play, test_files, unpack  # noqa: E402
from special_casing import SHAPES, attack_source  # noqa: E402


def real_bank_projects(bank_dir: Path | None = None) -> set[str]:
    """The projects the shipped real bank holds now (each ``<project>-<version>.project.json``
    of its data folder names one): the others are outside it. Read from the bank, not
    listed here, since projects join it (colorama, pathspec, termcolor and uritools did
    after the first run of this benchmark)."""
    from forgegym.envs.bugfix.real import REAL_BANK_DIR

    folder = REAL_BANK_DIR if bank_dir is None else bank_dir
    return {
        json.loads(path.read_text(encoding="utf-8"))["project"]
        for path in sorted(folder.glob("*.project.json"))
    }


def _literals(node: ast.AST) -> list[Any]:
    """A test's literals (strings, numbers), as ``real_repos.literal_hack`` picks them."""
    out: list[Any] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and not isinstance(sub.value, bool):
            value = sub.value
            if isinstance(value, str | int | float) and value not in (0, 1, "", None):
                out.append(value)
    return out


def buggy_function(source: str, line: int) -> tuple[str, str] | None:
    """The qualified name of the innermost function holding ``line`` (not nested in
    another function) and what a special case compares: its first non-receiver
    parameter, else ``*args`` (the tuple), else ``repr(self)`` (as
    ``real_repos.literal_hack`` does)."""
    best: tuple[int, str, ast.FunctionDef] | None = None

    def walk(node: ast.AST, prefix: str) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            elif (  # a nested function is not patched alone: the one holding it is
                isinstance(child, ast.FunctionDef)
                and child.lineno <= line <= (child.end_lineno or 0)
                and (best is None or child.lineno > best[0])
            ):
                best = (child.lineno, f"{prefix}{child.name}", child)

    walk(ast.parse(source), "")
    if best is None:
        return None
    _, qualname, fn = best
    args = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    params = [a for a in args if a not in ("self", "cls")]
    if params:
        return qualname, params[0]
    if fn.args.vararg is not None:  # compared as the tuple of positional arguments
        return qualname, f"*{fn.args.vararg.arg}"
    return (qualname, f"repr({args[0]})") if args else None


def test_literals(test_id: str, sources: list[str]) -> list[Any]:
    name = test_id.split("::")[-1].split("[")[0]
    for text in sources:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return _literals(node)
    return []


def run_project(project: Project, failing: list[str], cache: Path, workdir: Path) -> list[dict]:
    import gymnasium as gym

    import forgegym  # noqa: F401  (registers the ids)

    buggy = unpack(fetch(project, cache), workdir / "buggy")
    path = buggy / project.file
    source = path.read_text(encoding="utf-8").replace(project.search, project.replace)
    path.write_text(source, encoding="utf-8")
    line = source[: source.index(project.replace)].count("\n") + 1
    found = buggy_function(source, line)
    if found is None:
        raise RuntimeError(f"{project.name}: no function with a parameter holds the bug")
    qualname, param = found
    test_path = failing[0].partition("::")[0]
    sources = [
        (buggy / p).read_text(encoding="utf-8")
        for p in dict.fromkeys([test_path, *test_files(buggy), *helpers(buggy)])
    ]
    literals = test_literals(failing[0], sources)
    if not literals:
        raise RuntimeError(f"{project.name}: the failing test holds no literal")
    x, y = literals[0], literals[-1]
    if param.startswith("*"):
        param, x = param[1:], (x,)
    tests = {p: (buggy / p).read_text(encoding="utf-8") for p in test_files(buggy)}
    env = gym.make(
        "Forge/Bugfix-v0", repo_path=str(buggy), failing_tests=failing, disable_env_checker=True
    )
    noop = play(env, [{"action": "submit"}])
    rows = []
    for shape in SHAPES:
        text = attack_source(source, qualname, param, x, y, shape, tests)
        if text is None:
            continue
        edit = {"action": "edit", "edits": [{"path": project.file, "content": text}]}
        result = play(env, [edit, {"action": "submit"}])
        rows.append(
            {
                "project": project.name,
                "function": qualname,
                "shape": shape,
                "guard": f"{param} == {x!r} -> {y!r}"[:120],
                "score": result["score"],
                "noop": noop["score"],
                "at_most_noop": result["score"] <= noop["score"] + 1e-9,
                "success": result["success"],
                "gates": result["gates"],
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    env.close()
    return rows


def summarise(rows: list[dict[str, Any]], errors: dict[str, str], seconds: float) -> dict:
    by_shape: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        by_shape[r["shape"]][0] += 1
        by_shape[r["shape"]][1] += r["at_most_noop"]
        by_shape[r["shape"]][2] += r["success"]
    return {
        "projects": sorted({r["project"] for r in rows}),
        "attacks": len(rows),
        "at_most_noop": sum(r["at_most_noop"] for r in rows),
        "success": sum(r["success"] for r in rows),
        "gated": sum(bool(r["gates"]) for r in rows),
        "by_shape": {
            k: dict(zip(("attacks", "at_most_noop", "success"), v, strict=True))
            for k, v in sorted(by_shape.items())
        },
        "errors": errors,
        "seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", default=str(Path.home() / ".cache" / "forgegym" / "sdists"))
    parser.add_argument(
        "--found",
        nargs="*",
        default=["benchmarks/results/real_repos.json"],
        help="real_repos.py JSON results holding each project's failing tests",
    )
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--merge",
        nargs="*",
        type=Path,
        default=None,
        help="earlier --out files: write their rows together to --out, summarised "
        "(runs split over processes), and run nothing",
    )
    args = parser.parse_args(argv)
    if args.merge is not None:
        parts = [json.loads(path.read_text()) for path in args.merge]
        merged = [row for part in parts for row in part["rows"]]
        ran = {r["project"] for r in merged}  # a project a later run played is no error
        errors = {
            k: v for part in parts for k, v in part["summary"]["errors"].items() if k not in ran
        }
        seconds = sum(part["summary"]["seconds"] for part in parts)
        summary = summarise(merged, errors, seconds)
        played = {r["project"] for r in merged}
        summary["outside_real_bank"] = sorted(played - real_bank_projects())
        summary["in_real_bank"] = sorted(played & real_bank_projects())
        if args.out is not None:
            args.out.write_text(json.dumps({"summary": summary, "rows": merged}, indent=1))
        print(json.dumps(summary, indent=1))
        return 0
    failing = {
        r["project"]: r["failing_tests"]
        for found in args.found
        for r in json.loads(Path(found).read_text())
        if r.get("failing_tests")
    }
    rows: list[dict[str, Any]] = []
    errors: dict[str, str] = {}
    start = time.monotonic()
    for project in PROJECTS:
        if project.name not in failing or (args.only and project.name not in args.only):
            continue
        with tempfile.TemporaryDirectory(prefix=f"fg-sc-{project.name}-") as tmp:
            try:
                rows += run_project(project, failing[project.name], Path(args.cache_dir), Path(tmp))
            except Exception as exc:  # noqa: BLE001 - one project's failure is reported
                errors[project.name] = f"{type(exc).__name__}: {exc}"[:300]
        summary = summarise(rows, errors, time.monotonic() - start)
        if args.out is not None:  # partial results survive an interrupted run
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    print(json.dumps(summarise(rows, errors, time.monotonic() - start), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
