"""Per-episode workspaces: pristine copies, validated edits, grading copies and diffs.

The agent's workspace holds only what the agent may see. Model-written code never
runs in it: every test run and every grading pass happens in a *grading copy*, a
fresh directory in which non-editable files are restored from their pristine
contents and only the editable files carry the agent's changes. Files the agent's
code creates at run time (``conftest.py``, ``pytest.ini``, ``*.pth``, ...) therefore
never reach a later run. Sandboxed runs do not even see the grading copy: the runner
ships its files into a fresh, size-limited tmpfs copy per job inside the sandbox, so the
directories here are written by the trusted parent only, and their removal is verified.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import posixpath
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from forgegym.sandbox.isolation import remove_tree


class EditSpec(Protocol):
    """One file edit, as :class:`forgegym.core.actions.EditSpec` validates it (a
    structural type, so the sandbox does not import ``core``, which imports it)."""

    @property
    def path(self) -> str: ...
    @property
    def search(self) -> str | None: ...
    @property
    def replace(self) -> str | None: ...
    @property
    def content(self) -> str | None: ...
    @property
    def delete(self) -> bool: ...
    @property
    def move_to(self) -> str | None: ...


__all__ = [
    "PROTECTED_NAMES",
    "EditReport",
    "Workspace",
    "WorkspaceCleanupError",
    "creatable_path",
    "scratch_root",
    "validate_relative_path",
]

#: File names the agent may never create, whatever a task's ``creatable`` patterns say:
#: they change how Python or pytest start (test collection, plugins, site hooks).
PROTECTED_NAMES: tuple[str, ...] = (
    "conftest.py",
    "sitecustomize.py",
    "usercustomize.py",
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "*.pth",
    "__pycache__",
    "*.pyc",
    "*.so",
)


def creatable_path(path: str, patterns: Iterable[str]) -> bool:
    """Whether a new file at ``path`` matches one of ``patterns`` (fnmatch on the whole
    '/'-separated path; ``*`` does not cross ``/``) and no part of it is protected."""
    try:
        path = validate_relative_path(path)
    except ValueError:
        return False
    parts = path.split("/")
    if any(fnmatch.fnmatchcase(part, name) for part in parts for name in PROTECTED_NAMES):
        return False
    for pattern in patterns:
        pattern_parts = pattern.split("/")
        if len(pattern_parts) == len(parts) and all(
            fnmatch.fnmatchcase(part, want) for part, want in zip(parts, pattern_parts, strict=True)
        ):
            return True
    return False


class WorkspaceCleanupError(OSError):
    """A workspace directory or grading copy could not be removed."""


def _remove_verified(directory: Path) -> None:
    if not os.path.lexists(directory):
        return
    why = remove_tree(str(directory))
    if why is not None:
        raise WorkspaceCleanupError(f"could not remove {directory}: {why}")


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
        creatable: glob patterns of new files the agent may create (see
            :func:`creatable_path`). When given, editable and created files may also be
            deleted and moved; without it the set of files is fixed.
        prefix: directory-name prefix, for debugging.
        on_disk: keep the files in a directory (default). ``False`` keeps them in memory
            only (``root`` is ``None``): the same edit rules and grading copies, no
            directory of its own (batch grading parses completions this way).
        data_files: path -> bytes of read-only data files (``Task.data_files``: compiled
            catalogues, binary fixtures, data modules over the text budget), written into
            the workspace and every copy of it but never part of what the agent sees,
            reads, edits, creates or diffs.
    """

    def __init__(
        self,
        files: Mapping[str, str],
        editable: Iterable[str],
        *,
        creatable: Iterable[str] = (),
        prefix: str = "fg-",
        on_disk: bool = True,
        data_files: Mapping[str, bytes] | None = None,
    ):
        self.pristine: dict[str, str] = {validate_relative_path(p): c for p, c in files.items()}
        self.data_files: dict[str, bytes] = {
            validate_relative_path(p): bytes(c) for p, c in (data_files or {}).items()
        }
        both = sorted(self.data_files.keys() & self.pristine.keys())
        if both:
            raise ValueError(f"data files that are also text files: {both[:5]}")
        self.editable: frozenset[str] = frozenset(validate_relative_path(p) for p in editable)
        self.creatable: tuple[str, ...] = tuple(creatable)
        missing = self.editable - self.pristine.keys()
        if missing:
            raise ValueError(f"editable files not in files: {sorted(missing)}")
        self.current: dict[str, str] = dict(self.pristine)
        self.root: Path | None = None
        self._copies: list[Path] = []
        if on_disk:
            self.root = Path(tempfile.mkdtemp(prefix=prefix, dir=scratch_root()))
            self._write_data(self.root, self.data_files)
            self._write_tree(self.root, self.current)

    # ------------------------------------------------------------------ edits
    def writable(self, path: str) -> bool:
        """Whether the agent may write ``path``: an editable file, or a new file the
        ``creatable`` patterns allow (never a pristine read-only file)."""
        if path in self.editable:
            return True
        return (
            path not in self.pristine
            and path not in self.data_files
            and creatable_path(path, self.creatable)
        )

    def apply_edits(self, edits: Sequence[EditSpec]) -> EditReport:
        """Apply ``edits`` atomically: if any is invalid, nothing changes."""
        report = EditReport()
        staged = dict(self.current)
        for index, edit in enumerate(edits):
            try:
                path = validate_relative_path(edit.path)
                target = validate_relative_path(edit.move_to) if edit.move_to else None
            except ValueError as exc:
                report.errors.append(f"edit {index}: {exc}")
                continue
            error = self._stage(staged, path, target, edit)
            if error:
                report.errors.append(f"edit {index}: {error}")
                continue
            report.applied.append(path if target is None else f"{path} -> {target}")
        if report.ok:
            root = self.root
            for path in sorted(set(self.current) | set(staged)):
                if root is None:
                    break
                if path not in staged:
                    self._remove_file(root, path)
                elif self.current.get(path) != staged[path]:
                    self._write_file(root, path, staged[path])
            self.current = staged
        else:
            report.applied.clear()
        return report

    def _refusal(self, path: str) -> str:
        allowed = ", ".join(sorted(self.editable))
        if self.creatable:
            allowed += "; new files matching " + ", ".join(self.creatable)
        return f"{path!r} is not editable (editable files: {allowed})"

    def _stage(self, staged: dict[str, str], path: str, target: str | None, edit: EditSpec) -> str:
        """Apply one edit to ``staged``; return an error message or ``""``."""
        if not self.writable(path):
            return self._refusal(path)
        if edit.delete or target is not None:
            if not self.creatable:
                return "this task does not allow deleting or moving files"
            if path not in staged:
                return f"{path!r} does not exist"
            if target is not None:
                if not self.writable(target):
                    return self._refusal(target)
                if target in staged:
                    return f"cannot move {path!r} to {target!r}: {target!r} exists"
                staged[target] = staged[path]
            del staged[path]
            return ""
        if edit.content is not None:
            staged[path] = edit.content
        else:
            assert edit.search is not None and edit.replace is not None
            if path not in staged:
                return f"{path!r} does not exist; create it with `content`"
            count = staged[path].count(edit.search)
            if count != 1:
                where = "not found" if count == 0 else f"found {count} times"
                return f"`search` text {where} in {path}; it must match exactly once"
            staged[path] = staged[path].replace(edit.search, edit.replace, 1)
        try:
            staged[path].encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"the new text of {path} is not valid UTF-8 ({exc})"
        return ""

    def set_files(self, files: Mapping[str, str]) -> None:
        """Replace editable files wholesale (used to replay a known state)."""
        for path, content in files.items():
            norm = validate_relative_path(path)
            if not self.writable(norm):
                raise ValueError(f"files: {path!r} is not editable")
            self.current[norm] = content
            if self.root is not None:
                self._write_file(self.root, norm, content)

    def reset(self) -> None:
        """Restore every file to its pristine content (created files are removed)."""
        if self.root is not None:
            for path in set(self.current) - set(self.pristine):
                self._remove_file(self.root, path)
        self.current = dict(self.pristine)
        if self.root is not None:
            self._write_data(self.root, self.data_files)
            self._write_tree(self.root, self.current)

    # ------------------------------------------------------------ inspection
    def read(self, path: str) -> str:
        return self.current[validate_relative_path(path)]

    def agent_files(self) -> dict[str, str]:
        """The files the agent owns now: editable files still present and created ones."""
        return {
            p: c for p, c in self.current.items() if p in self.editable or p not in self.pristine
        }

    def created_files(self) -> list[str]:
        return sorted(set(self.current) - set(self.pristine))

    def deleted_files(self) -> list[str]:
        """Editable files the agent deleted (or moved away)."""
        return sorted(set(self.pristine) - set(self.current))

    def changed_files(self) -> list[str]:
        """Editable files changed, created or deleted."""
        return sorted(
            p
            for p in set(self.current) | set(self.pristine)
            if self.current.get(p) != self.pristine.get(p)
        )

    def diff(self, context: int = 3) -> str:
        """Unified diff of the agent's changes against the pristine files."""
        chunks: list[str] = []
        for path in self.changed_files():
            before = self.pristine.get(path)
            after = self.current.get(path)
            chunks.extend(
                difflib.unified_diff(
                    (before or "").splitlines(keepends=True),
                    (after or "").splitlines(keepends=True),
                    fromfile=f"a/{path}" if before is not None else "/dev/null",
                    tofile=f"b/{path}" if after is not None else "/dev/null",
                    n=context,
                )
            )
        return "".join(chunks)

    # --------------------------------------------------------------- grading
    def grading_copy(self, extra_files: Mapping[str, str] | None = None) -> Path:
        """A fresh directory: pristine non-editable files, current editable files, plus
        ``extra_files`` (hidden checks written only now, by the trusted parent)."""
        return self.materialise(self.current, extra_files, deleted=self.deleted_files())

    def materialise(
        self,
        editable_contents: Mapping[str, str],
        extra_files: Mapping[str, str] | None = None,
        *,
        deleted: Iterable[str] = (),
    ) -> Path:
        """Like :meth:`grading_copy` for arbitrary editable contents (batch grading).

        Paths the agent may not write are ignored (their pristine content is used);
        ``deleted`` names editable files left out of the copy (only where the task allows
        deleting files)."""
        directory = Path(tempfile.mkdtemp(prefix="fg-grade-", dir=scratch_root()))
        tree = dict(self.pristine)
        if self.creatable:
            for path in deleted:
                if path in self.editable:
                    tree.pop(path, None)
        for path, content in editable_contents.items():
            if self.writable(path):
                tree[path] = content
        tree.update(extra_files or {})
        # The data files first: a text file of the same path (a hidden file the parent
        # adds) is the one the run sees.
        self._write_data(directory, {p: c for p, c in self.data_files.items() if p not in tree})
        self._write_tree(directory, tree)
        self._copies.append(directory)
        return directory

    def discard(self, directory: Path) -> None:
        """Remove a grading copy made by this workspace and verify it is gone.

        Raises:
            WorkspaceCleanupError: something could not be removed (it is reported, never
                silently left behind). Sandboxed runs never write into these copies (each
                job gets its own copy inside the sandbox), so this means a host problem.
        """
        if directory in self._copies:
            self._copies.remove(directory)
        _remove_verified(Path(directory))

    def close(self) -> None:
        """Remove the workspace and every grading copy; raises ``WorkspaceCleanupError``
        (after trying all of them) if anything could not be removed."""
        problems: list[str] = []
        for directory in [*self._copies, *([self.root] if self.root is not None else [])]:
            try:
                _remove_verified(directory)
            except WorkspaceCleanupError as exc:
                problems.append(str(exc))
        self._copies.clear()
        if problems:
            raise WorkspaceCleanupError("; ".join(problems))

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

    @staticmethod
    def _write_data(root: Path, files: Mapping[str, bytes]) -> None:
        """Write read-only data files by content (bytes), as :meth:`_write_file` writes
        text (no symlink followed, nothing outside the root)."""
        for path, content in files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink():
                target.unlink()
            if not target.parent.resolve().is_relative_to(root.resolve()):
                raise ValueError(f"path {path!r} escapes the workspace through a symlink")
            target.write_bytes(content)

    @staticmethod
    def _remove_file(root: Path, path: str) -> None:
        target = root / path
        if target.is_symlink() or target.is_file():
            target.unlink()
        # Leave no empty package directories behind a move.
        parent = target.parent
        while parent != root and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent

    @classmethod
    def _write_tree(cls, root: Path, files: Mapping[str, str]) -> None:
        for path, content in files.items():
            cls._write_file(root, path, content)
