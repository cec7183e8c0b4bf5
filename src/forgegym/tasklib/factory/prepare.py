"""Step 1 of a build: read a project as repository mode reads it and install its test
dependencies (:func:`prepare_project`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forgegym.rewards.phases import phase
from forgegym.sandbox.jobs import ProjectRun
from forgegym.tasklib.depenv import declared_test_dependencies, ensure_environment
from forgegym.tasklib.project import (
    MAX_FILE_BYTES,
    MAX_FILES,
    ProjectLayout,
    package_names,
    project_layout,
    read_project,
)

__all__ = ["FactoryError", "PreparedProject", "prepare_project"]


class FactoryError(RuntimeError):
    """A project the factory cannot build tasks from (its suite does not run, ...)."""


@dataclass(frozen=True)
class PreparedProject:
    """A project read as repository mode reads it, with its test dependencies installed."""

    root: Path
    files: dict[str, str]
    layout: ProjectLayout
    requirements: tuple[str, ...]
    run: ProjectRun
    test_files: tuple[str, ...]
    #: Read-only data files by content (compiled catalogues, large data modules).
    data_files: dict[str, bytes] = field(default_factory=dict)


def _installed_pins(site: Path | None) -> list[str]:
    """``name==version`` of every distribution installed in ``site``."""
    if site is None or not site.is_dir():
        return []
    pins = []
    for info in site.glob("*.dist-info"):
        name, _, version = info.name[: -len(".dist-info")].partition("-")
        if name and version:
            pins.append(f"{name}=={version}")
    return sorted(pins, key=str.lower)


def prepare_project(
    root: Path,
    *,
    requirements: Sequence[str] | None = None,
    extra_requirements: Sequence[str] = (),
    cache_dir: str | Path | None = None,
) -> PreparedProject:
    """Read the project at ``root`` (repository mode's reader and caps) and install its
    test dependencies: ``requirements`` when given (a manifest's pins), else what the
    project declares plus ``extra_requirements``; the returned ``requirements`` are the
    pins of what was installed, so a rebuild installs the same versions."""
    files, _skipped, data = read_project(root, max_file_bytes=MAX_FILE_BYTES, max_files=MAX_FILES)
    layout = project_layout(files)
    # The project's own packages never come from its environment (docs/design/004).
    own = package_names(files, layout.import_paths)
    with phase("depenv"):
        if requirements is None:
            declared = [*declared_test_dependencies(files), *extra_requirements]
            site = ensure_environment(
                declared, cache_dir=cache_dir, base=root.resolve(), exclude=own
            )
            pins = _installed_pins(site)
        else:
            pins = list(requirements)
            site = ensure_environment(pins, cache_dir=cache_dir, base=root.resolve(), exclude=own)
    if site is not None:
        layout = layout.with_site_dirs([str(site)])
    tests = tuple(p for p in sorted(files) if layout.is_test_file(p))
    return PreparedProject(root, files, layout, tuple(pins), layout.run(), tests, data)
