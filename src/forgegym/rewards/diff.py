"""Diff statistics, a size credit, and no-op detection.

Files are compared as ``{relative_path: text}`` mappings; a path missing on one side
is a file added or deleted.
"""

from __future__ import annotations

import ast
import difflib
import io
import math
import tokenize
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from forgegym.rewards import bounded

__all__ = ["DiffStats", "diff_size_score", "diff_stats", "is_noop"]


class DiffStats(BaseModel):
    """Size of a change: files touched, lines added and removed, the unified diff."""

    model_config = ConfigDict(frozen=True)

    files_changed: int
    lines_added: int
    lines_removed: int
    unified: str

    @property
    def lines_changed(self) -> int:
        """``lines_added + lines_removed``."""
        return self.lines_added + self.lines_removed


def diff_stats(before: Mapping[str, str], after: Mapping[str, str], context: int = 3) -> DiffStats:
    """Compare two file mappings with :mod:`difflib` (unified diff, ``a/`` and ``b/`` paths)."""
    files = added = removed = 0
    chunks: list[str] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        files += 1
        old_lines = (old or "").splitlines(keepends=True)
        new_lines = (new or "").splitlines(keepends=True)
        lines = list(
            difflib.unified_diff(
                old_lines,
                new_lines,
                fromfile="/dev/null" if old is None else f"a/{path}",
                tofile="/dev/null" if new is None else f"b/{path}",
                n=context,
            )
        )
        for line in lines[2:]:  # skip the ---/+++ header
            if line.startswith("+"):
                added += 1
            elif line.startswith("-"):
                removed += 1
        chunks.extend(line if line.endswith("\n") else line + "\n" for line in lines)
    return DiffStats(
        files_changed=files, lines_added=added, lines_removed=removed, unified="".join(chunks)
    )


def diff_size_score(stats: DiffStats, budget_lines: int) -> float:
    """A credit in (0, 1] that decays with the number of changed lines.

    ``exp(-ln 2 * max(0, changed - budget_lines) / budget_lines)``: a change within
    ``budget_lines`` (the reference fix's size plus slack) scores 1.0, and the credit
    halves for every further ``budget_lines`` changed, so a minimal fix beats a rewrite
    without any size being forbidden. An empty diff scores 1.0; use :func:`is_noop` to
    penalise doing nothing.
    """
    if budget_lines < 1:
        raise ValueError(f"budget_lines: must be >= 1, got {budget_lines!r}")
    excess = max(0, stats.lines_changed - budget_lines)
    return math.exp(-math.log(2) * excess / budget_lines)


def _strip_comments(text: str) -> list[tuple[int, str]] | None:
    """Token stream without comments and layout tokens (None if it cannot be tokenized)."""
    ignored = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    kept: list[tuple[int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in ignored:
                kept.append((tok.type, tok.string))
    except tokenize.TokenError:  # e.g. an unclosed bracket: raised at end of input
        kept.append((tokenize.ERRORTOKEN, "<eof>"))
    except (IndentationError, SyntaxError):
        return None
    return kept


def _same_code(old: str, new: str, path: str) -> bool:
    if old == new:
        return True
    if path.endswith(".py"):
        try:
            old_tree, new_tree = bounded.parse(old, path), bounded.parse(new, path)
        except bounded.Unverifiable:
            return False
        if old_tree is not None and new_tree is not None:
            return ast.dump(old_tree) == ast.dump(new_tree)
        # An unparseable pair still is a no-op if it differs only in comments/layout.
        old_tokens, new_tokens = _strip_comments(old), _strip_comments(new)
        if old_tokens is not None and old_tokens == new_tokens:
            return True
    return old.split() == new.split()


def is_noop(before: Mapping[str, str], after: Mapping[str, str]) -> bool:
    """Whether ``after`` is semantically the same as ``before``.

    Python files compare by ``ast.dump`` (so whitespace, comments and formatting do not
    count; docstring edits do, as they change the AST); other files compare modulo
    whitespace. A file added or deleted is a change.
    """
    if set(before) != set(after):
        return False
    return all(_same_code(before[p], after[p], p) for p in before)
