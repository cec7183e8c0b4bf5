"""Per-episode workspaces: pristine copies, validated edits, grading copies and diffs.

The agent's workspace holds only what the agent may see. Model-written code never
runs in it: every test run and every grading pass happens in a *grading copy*, a
fresh directory in which non-editable files are restored from their pristine
contents and only the editable files carry the agent's changes. Files the agent's
code creates at run time (``conftest.py``, ``pytest.ini``, ``*.pth``, ...) therefore
never reach a later run.
"""

from __future__ import annotations

import difflib
import os
import posixpath
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forgegym.core.actions import EditSpec

__all__ = ["EditReport", "Workspace", "validate_relative_path", "scratch_root"]


def scratch_root() -> Path:
    """Where workspaces live: tmpfs (``/dev/shm``) when present and writable, since
    fork-per-run grading writes and reads many small files."""
    override = os.environ.get("FORGEGYM_SCRATCH")
    if override:
        return Path(override)
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return Path(tempfile.gettempdir())


def validate_relative_path(path: str) -> str:
    """Normalise a workspace path or raise ``ValueError`` saying why it is refused."""
    if not isinstance(path, str) or not path.strip():
        raise ValueError("path must be a non-empty string")
    if "\x00" in path:
        raise ValueError(f"path {path!r} contains a NUL byte")
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        raise ValueError(f"path {path!r} must be relative to the workspace root")
    normalised = posixpath.normpath(path.replace("\\", "/"))
    if normalised == "." or normalised.startswith("../") or normalised == "..":
        raise ValueError(f"path {path!r} escapes the workspace")
    if any(part == ".." for part in normalised.split("/")):
        raise ValueError(f"path {path!r} escapes the workspace")
    return normalised


@dataclass
class EditReport:
    """What one ``edit`` action did: every edit applied, or none (atomic)."""

    applied: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def render(self) -> str:
        if self.ok:
            return "Applied edits to: " + ", ".join(self.applied)
        return "Edit rejected (no file was changed):\n" + "\n".join(f"- {e}" for e in self.errors)


class Workspace:
    """A directory holding one episode's agent-visible files.

    Args:
        files: path -> content of every agent-visible file (the pristine state).
        editable: the paths the agent may change.
        prefix: directory-name prefix, for debugging.
    """

    def __init__(self, files: Mapping[str, str], editable: Iterable[str], *, prefix: str = "fg-"):
        self.pristine: dict[str, str] = {validate_relative_path(p): c for p, c in files.items()}
        self.editable: frozenset[str] = frozenset(validate_relative_path(p) for p in editable)
        missing = self.editable - self.pristine.keys()
        if missing:
            raise ValueError(f"editable files not in files: {sorted(missing)}")
        self.current: dict[str, str] = dict(self.pristine)
        self.root = Path(tempfile.mkdtemp(prefix=prefix, dir=scratch_root()))
        self._copies: list[Path] = []
        self._write_tree(self.root, self.current)

    # ------------------------------------------------------------------ edits
    def apply_edits(self, edits: Sequence[EditSpec]) -> EditReport:
        """Apply ``edits`` atomically: if any is invalid, nothing changes."""
        report = EditReport()
        staged = dict(self.current)
        for index, edit in enumerate(edits):
            try:
                path = validate_relative_path(edit.path)
            except ValueError as exc:
                report.errors.append(f"edit {index}: {exc}")
                continue
            if path not in self.editable:
                allowed = ", ".join(sorted(self.editable))
                report.errors.append(
                    f"edit {index}: {path!r} is not editable (editable files: {allowed})"
                )
                continue
            if edit.content is not None:
                staged[path] = edit.content
            else:
                assert edit.search is not None and edit.replace is not None
                count = staged[path].count(edit.search)
                if count != 1:
                    where = "not found" if count == 0 else f"found {count} times"
                    report.errors.append(
                        f"edit {index}: `search` text {where} in {path}; it must match exactly once"
                    )
                    continue
                staged[path] = staged[path].replace(edit.search, edit.replace, 1)
            try:
                staged[path].encode("utf-8")
            except UnicodeEncodeError as exc:
                report.errors.append(
                    f"edit {index}: the new text of {path} is not valid UTF-8 ({exc})"
                )
                continue
            report.applied.append(path)
        if report.ok:
            for path in set(report.applied):
                self.current[path] = staged[path]
                self._write_file(self.root, path, staged[path])
        else:
            report.applied.clear()
        return report

    def set_files(self, files: Mapping[str, str]) -> None:
        """Replace editable files wholesale (used to replay a known state)."""
        for path, content in files.items():
            norm = validate_relative_path(path)
            if norm not in self.editable:
                raise ValueError(f"files: {path!r} is not editable")
            self.current[norm] = content
            self._write_file(self.root, norm, content)

    def reset(self) -> None:
        """Restore every file to its pristine content."""
        self.current = dict(self.pristine)
        self._write_tree(self.root, self.current)

    # ------------------------------------------------------------ inspection
    def read(self, path: str) -> str:
        return self.current[validate_relative_path(path)]

    def changed_files(self) -> list[str]:
        return sorted(p for p in self.editable if self.current[p] != self.pristine[p])

    def diff(self, context: int = 3) -> str:
        """Unified diff of the agent's changes against the pristine files."""
        chunks: list[str] = []
        for path in self.changed_files():
            chunks.extend(
                difflib.unified_diff(
                    self.pristine[path].splitlines(keepends=True),
                    self.current[path].splitlines(keepends=True),
                    fromfile=f"a/{path}",
                    tofile=f"b/{path}",
                    n=context,
                )
            )
        return "".join(chunks)

    # --------------------------------------------------------------- grading
    def grading_copy(self, extra_files: Mapping[str, str] | None = None) -> Path:
        """A fresh directory: pristine non-editable files, current editable files, plus
        ``extra_files`` (hidden checks written only now, by the trusted parent)."""
        return self.materialise(self.current, extra_files)

    def materialise(
        self, editable_contents: Mapping[str, str], extra_files: Mapping[str, str] | None = None
    ) -> Path:
        """Like :meth:`grading_copy` for arbitrary editable contents (batch grading)."""
        directory = Path(tempfile.mkdtemp(prefix="fg-grade-", dir=scratch_root()))
        tree = dict(self.pristine)
        for path, content in editable_contents.items():
            if path in self.editable:
                tree[path] = content
        tree.update(extra_files or {})
        self._write_tree(directory, tree)
        self._copies.append(directory)
        return directory

    def discard(self, directory: Path) -> None:
        """Remove a grading copy made by this workspace."""
        shutil.rmtree(directory, ignore_errors=True)
        if directory in self._copies:
            self._copies.remove(directory)

    def close(self) -> None:
        for directory in self._copies:
            shutil.rmtree(directory, ignore_errors=True)
        self._copies.clear()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- helpers
    @staticmethod
    def _write_file(root: Path, path: str, content: str) -> None:
        target = root / path
        # A symlink planted by earlier code could redirect the write; we never
        # follow one, and the final path must stay under the root.
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        resolved_parent = target.parent.resolve()
        if not resolved_parent.is_relative_to(root.resolve()):
            raise ValueError(f"path {path!r} escapes the workspace through a symlink")
        target.write_text(content, encoding="utf-8")

    @classmethod
    def _write_tree(cls, root: Path, files: Mapping[str, str]) -> None:
        for path, content in files.items():
            cls._write_file(root, path, content)
