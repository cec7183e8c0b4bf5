"""The real-code task factory: validated Bugfix tasks mutated from pinned real projects.

:mod:`.source` finds/fetches pinned sdists, :mod:`.build` runs the pipeline,
:mod:`.harness` is the trusted pytest plugin the build loads into the project's interpreter.
"""

from forgegym.tasklib.factory.build import (
    BuildStats,
    FactoryError,
    build_pinned,
    build_project,
    difficulty_level,
    read_manifest,
    write_manifest,
)
from forgegym.tasklib.factory.source import ColdCacheError, fetch_sdist, sha256_of, unpack_sdist

__all__ = [
    "BuildStats",
    "ColdCacheError",
    "FactoryError",
    "build_pinned",
    "build_project",
    "difficulty_level",
    "fetch_sdist",
    "read_manifest",
    "sha256_of",
    "unpack_sdist",
    "write_manifest",
]
