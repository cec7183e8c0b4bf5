"""Lint findings via ruff's JSON output (never a hand-written linter).

Ruff only reads the files, it never imports or executes them, so it is safe to run
in the trusted parent on model-written code.

Rule set (:data:`DEFAULT_SELECT`): ``E9`` (syntax/IO errors), ``F`` (pyflakes:
undefined names, unused imports, ``F63`` invalid comparisons, ``F7`` misplaced
statements such as ``return`` outside a function, ``F82`` undefined names) and ``B``
(bugbear: mutable defaults, ``assert False``, loop-variable capture, ...). Style rules
are left out on purpose: a reward that moves with formatting teaches formatting.
Findings whose code starts with one of :data:`SEVERE_PREFIXES` (syntax errors, undefined
names, invalid comparisons, misplaced statements) cost more in :func:`lint_score`.

Ruff runs with ``--isolated`` so a ``pyproject.toml``/``ruff.toml`` the agent writes
into its workspace cannot change the rules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from forgegym.rewards.phases import phase

__all__ = [
    "DEFAULT_SELECT",
    "SEVERE_PREFIXES",
    "LintError",
    "LintFinding",
    "lint_files",
    "lint_many",
    "lint_score",
    "lint_sources",
    "new_findings",
    "ruff_command",
]

DEFAULT_SELECT: tuple[str, ...] = ("E9", "F", "B")
"""Rules run by default: syntax errors, pyflakes, bugbear."""
SEVERE_PREFIXES: tuple[str, ...] = ("invalid-syntax", "E9", "F63", "F7", "F82")
"""Codes that indicate broken code rather than smells."""


class LintError(RuntimeError):
    """Ruff could not be run, timed out, or produced unreadable output."""


class LintFinding(BaseModel):
    """One ruff diagnostic. ``path`` is relative to the directory that was linted."""

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    path: str
    line: int
    column: int
    name: str = ""

    @property
    def severe(self) -> bool:
        """Whether this finding means the code is broken (see :data:`SEVERE_PREFIXES`)."""
        return self.code.startswith(SEVERE_PREFIXES)

    def render(self) -> str:
        """``path:line:col: CODE message``, as shown in an observation."""
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"


def ruff_command() -> list[str]:
    """The command prefix that runs the ruff installed with this Python."""
    try:
        from ruff.__main__ import find_ruff_bin

        return [os.fsdecode(find_ruff_bin())]
    except (ImportError, FileNotFoundError):
        return [sys.executable, "-m", "ruff"]


def lint_files(
    paths: Sequence[str | os.PathLike[str]],
    *,
    root: str | os.PathLike[str] | None = None,
    select: Iterable[str] = DEFAULT_SELECT,
    timeout: float = 30.0,
) -> list[LintFinding]:
    """Run ruff on ``paths`` and return its findings sorted by path, line, column.

    Args:
        paths: files (or directories) to lint, absolute or relative to ``root``.
        root: working directory; finding paths are reported relative to it.
        select: rule codes or prefixes.
        timeout: seconds before ruff is killed.

    Raises:
        LintError: ruff is missing, timed out, failed (exit status 2) or printed bad JSON.
    """
    if not paths:
        return []
    cwd = Path(root) if root is not None else Path.cwd()
    return _run_ruff(paths, cwd, select, timeout, isolated=True)


def _run_ruff(
    paths: Sequence[str | os.PathLike[str]],
    cwd: Path,
    select: Iterable[str],
    timeout: float,
    *,
    isolated: bool,
) -> list[LintFinding]:
    """One ruff run over ``paths`` from ``cwd`` (``isolated``: no configuration file is
    read; else the ones :func:`lint_many` wrote, each the closest to its files)."""
    rules = ",".join(select)
    command = [
        *ruff_command(),
        "check",
        "--output-format",
        "json",
        "--no-cache",
        *(["--isolated"] if isolated else []),
        "--exit-zero",
        "--select",
        rules,
        "--",
        *(os.fspath(p) for p in paths),
    ]
    try:
        with phase("lint"):
            proc = subprocess.run(
                command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
            )
    except subprocess.TimeoutExpired as exc:
        raise LintError(f"ruff timed out after {timeout} s") from exc
    except OSError as exc:
        raise LintError(f"could not run ruff: {exc}") from exc
    if proc.returncode != 0:
        raise LintError(f"ruff exited with {proc.returncode}: {proc.stderr.strip()[:500]}")
    try:
        records = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise LintError(f"unreadable ruff output: {proc.stdout[:200]!r}") from exc
    findings = []
    for record in records:
        filename = Path(record.get("filename") or "")
        try:
            rel = filename.resolve().relative_to(cwd.resolve()).as_posix()
        except ValueError:
            rel = filename.as_posix()
        location = record.get("location") or {}
        findings.append(
            LintFinding(
                code=record.get("code") or record.get("name") or "unknown",
                message=record.get("message", ""),
                path=rel,
                line=int(location.get("row") or 0),
                column=int(location.get("column") or 0),
                name=record.get("name") or "",
            )
        )
    return sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code))


def lint_sources(
    files: Mapping[str, str],
    *,
    select: Iterable[str] = DEFAULT_SELECT,
    timeout: float = 30.0,
) -> list[LintFinding]:
    """Lint in-memory sources ``{relative_path: text}`` by writing them to a temp dir.

    Useful to lint the pristine and the patched versions of the same files side by side.
    Only ``.py`` paths are linted; paths that escape the directory are rejected.
    """
    with tempfile.TemporaryDirectory(prefix="forgegym-lint-") as tmp:
        root = Path(tmp).resolve()
        written = []
        for rel, text in files.items():
            if not rel.endswith(".py"):
                continue
            target = (root / rel).resolve()
            if root not in target.parents:
                raise ValueError(f"files: path {rel!r} escapes the lint directory")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            written.append(target.relative_to(root).as_posix())
        return lint_files(written, root=root, select=select, timeout=timeout)


#: Ruff's configuration file names, in its order of precedence.
_CONFIG_NAMES = frozenset({".ruff.toml", "ruff.toml", "pyproject.toml"})


def lint_many(
    batches: Sequence[Mapping[str, str]],
    *,
    select: Iterable[str] = DEFAULT_SELECT,
    timeout: float = 30.0,
) -> list[list[LintFinding]]:
    """:func:`lint_sources` of every mapping in ``batches`` with *one* ruff run.

    Each mapping is written under its own directory (``0/``, ``1/``, ...) and its
    findings come back with paths relative to that directory, exactly as
    :func:`lint_sources` reports them. Exactly also in the findings themselves: some
    depend on the directory ruff takes as the project root, not only on the file (an
    unused first-party import in an ``__init__.py`` reads "... consider removing,
    adding to `__all__`, or using a redundant alias", and ``import mod`` is first-party
    when ``mod.py`` lies in the project root or its ``src/``). :func:`lint_sources`
    runs ruff ``--isolated`` from its directory, so each mapping's directory here holds
    an empty ``ruff.toml`` (ruff's defaults, that directory as the project root; ruff
    uses the configuration closest to a file), and so does the batch's directory (ruff
    never reads a configuration from above it). Only ``.py`` files are written, so no
    submitted file can change those. A mapping with a path through a directory named
    like a configuration file is linted alone. One process instead of one per
    completion is what makes linting a GRPO batch cheap.
    """
    if not batches:
        return []
    out: list[list[LintFinding]] = [[] for _ in batches]
    alone = {
        i
        for i, files in enumerate(batches)
        if any(_CONFIG_NAMES.intersection(rel.split("/")[:-1]) for rel in files)
    }
    for index in alone:
        out[index] = lint_sources(batches[index], select=select, timeout=timeout)
    with tempfile.TemporaryDirectory(prefix="forgegym-lint-") as tmp:
        root = Path(tmp).resolve()
        (root / "ruff.toml").write_text("", encoding="utf-8")
        written = []
        for index, files in enumerate(batches):
            if index in alone:
                continue
            base = root / str(index)
            base.mkdir()
            (base / "ruff.toml").write_text("", encoding="utf-8")
            for rel, text in files.items():
                if not rel.endswith(".py"):
                    continue
                target = (base / rel).resolve()
                if base not in target.parents:
                    raise ValueError(f"files: path {rel!r} escapes the lint directory")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                written.append(target.relative_to(root).as_posix())
        found = _run_ruff(written, root, select, timeout, isolated=False) if written else []
    for finding in found:
        head, _, rest = finding.path.partition("/")
        if not head.isdigit() or not rest or int(head) >= len(batches) or int(head) in alone:
            raise LintError(f"ruff reported an unexpected path {finding.path!r}")
        out[int(head)].append(finding.model_copy(update={"path": rest}))
    return out


def _key(finding: LintFinding) -> tuple[str, str, str]:
    # Line numbers shift when a patch adds lines above a finding, so a finding is
    # identified by file, rule and message, counted as a multiset.
    return (finding.path, finding.code, finding.message)


def new_findings(before: Iterable[LintFinding], after: Iterable[LintFinding]) -> list[LintFinding]:
    """Findings in ``after`` that ``before`` did not have (multiset difference by
    path, code and message; line numbers are ignored because edits shift them)."""
    remaining = Counter(_key(f) for f in before)
    introduced = []
    for finding in after:
        key = _key(finding)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            introduced.append(finding)
    return introduced


def lint_score(
    before: Iterable[LintFinding],
    after: Iterable[LintFinding],
    *,
    severe_cost: float = 0.5,
    other_cost: float = 0.1,
) -> float:
    """A credit in [0, 1]: 1 minus the cost of the findings the patch *introduced*.

    Findings that existed before cost nothing (the agent is not blamed for the
    starting state) and fixing them earns nothing extra (so the reward does not
    drift toward lint chores). Each new severe finding costs ``severe_cost``, each
    other one ``other_cost``; the result is clipped at 0.
    """
    if severe_cost < 0 or other_cost < 0:
        raise ValueError("severe_cost/other_cost: must be >= 0")
    cost = sum(severe_cost if f.severe else other_cost for f in new_findings(before, after))
    return max(0.0, 1.0 - cost)
