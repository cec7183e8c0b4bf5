"""Pinned sdists: find one in the cache (checking its sha256), fetch it, unpack it safely."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "ColdCacheError",
    "cached_sdist",
    "default_cache_dir",
    "fetch_sdist",
    "read_sdist_files",
    "sha256_of",
    "unpack_sdist",
]


class ColdCacheError(RuntimeError):
    """The pinned sdist is not in the cache and the package index could not provide it."""


def default_cache_dir() -> Path:
    """``$FORGEGYM_SDIST_CACHE``, else ``~/.cache/forgegym/sdists``."""
    env = os.environ.get("FORGEGYM_SDIST_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "forgegym" / "sdists"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def cached_sdist(name: str, version: str, cache_dir: Path) -> Path | None:
    """The sdist of ``name==version`` in ``cache_dir``, else ``None``."""
    if not cache_dir.is_dir():
        return None
    for path in sorted(cache_dir.iterdir()):
        for suffix in (".tar.gz", ".zip"):
            if path.name.endswith(suffix):
                dist, _, ver = path.name[: -len(suffix)].rpartition("-")
                if _normal(dist) == _normal(name) and ver == version:
                    return path
    return None


def fetch_sdist(
    name: str,
    version: str,
    cache_dir: Path | None = None,
    *,
    sha256: str | None = None,
    allow_download: bool = True,
    timeout_s: float = 300.0,
) -> tuple[Path, str]:
    """The cached sdist of ``name==version`` and its sha256, downloading it if absent.

    Raises:
        ColdCacheError: not cached and the index unreachable (or ``allow_download`` off).
        ValueError: the file's sha256 is not the pinned ``sha256``.
    """
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = cached_sdist(name, version, cache)
    if path is None:
        detail = "downloads are off (allow_download=False)"
        if allow_download:
            cache.mkdir(parents=True, exist_ok=True)
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
            cmd += ["--dest", str(cache), f"{name}=={version}"]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
                lines = (proc.stderr or proc.stdout).strip().splitlines()
                detail = lines[-1] if lines else f"pip exited {proc.returncode}"
            except (OSError, subprocess.TimeoutExpired) as exc:
                detail = f"pip download failed: {exc}"
            path = cached_sdist(name, version, cache)
        if path is None:
            raise ColdCacheError(
                f"the sdist of {name}=={version} is not in the cache {cache} and could not be "
                f"fetched from the package index ({detail}). Put the pinned file in the cache "
                "(or set FORGEGYM_SDIST_CACHE) or go online once to fill it."
            )
    digest = sha256_of(path)
    if sha256 is not None and digest != sha256:
        raise ValueError(
            f"{path.name}: sha256 {digest} is not the pinned {sha256} (a different file under "
            "the same name: refusing to build tasks from it)"
        )
    return path, digest


def unpack_sdist(sdist: Path, dest: Path) -> Path:
    """Unpack ``sdist`` under ``dest`` (tar's ``data`` filter: no links out, no devices)
    and return the project root (the archive's single top folder)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(sdist) as archive:
        tops = {Path(member.name).parts[0] for member in archive.getmembers()}
        archive.extractall(dest, filter="data")
    if len(tops) != 1:
        raise ValueError(f"{sdist.name}: expected one top-level folder, found {sorted(tops)}")
    return dest / tops.pop()


def sdist_paths(sdist: Path) -> set[str]:
    """The paths below the archive's top folder of every file and link of a ``.tar.gz``
    sdist: what :func:`unpack_sdist` writes."""
    with tarfile.open(sdist) as archive:
        return {
            path
            for member in archive.getmembers()
            if (member.isfile() or member.issym() or member.islnk())
            and (path := member.name.partition("/")[2])
        }


def unpacked_intact(root: Path, sdist: Path) -> bool:
    """Whether the unpacked tree ``root`` still holds exactly ``sdist``'s files (bytecode
    caches aside). A test run in a shared unpacked tree leaves its outputs there (seen:
    pyparsing's examples write ``range_check.html``, hypothesis its ``.hypothesis``
    database); read as the project, they would become pristine files of every task."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(folder, root)
        # a link to a folder is one archive member (os.walk does not follow it)
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        for name in [*files, *links]:
            found.add(name if rel == "." else f"{rel}/{name}")
    return found == {p for p in sdist_paths(sdist) if "__pycache__" not in p.split("/")}


def read_sdist_files(sdist: Path, wanted: Callable[[str], bool]) -> dict[str, str]:
    """The text of the files of ``sdist`` (a ``.tar.gz`` or ``.zip``) whose path below the
    archive's top folder ``wanted`` accepts, read without unpacking (undecodable bytes
    replaced)."""
    out: dict[str, str] = {}
    if sdist.name.endswith(".zip"):
        with zipfile.ZipFile(sdist) as archive:
            for info in archive.infolist():
                path = info.filename.partition("/")[2]
                if not info.is_dir() and path and wanted(path):
                    out[path] = archive.read(info).decode("utf-8", "replace")
        return out
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            path = member.name.partition("/")[2]
            if member.isfile() and path and wanted(path):
                handle = archive.extractfile(member)
                if handle is not None:
                    out[path] = handle.read().decode("utf-8", "replace")
    return out
