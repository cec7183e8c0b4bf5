"""The typed grading data of a Refactor task (``Task.hidden``; never shown to the agent)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from forgegym.core.task import HiddenData

__all__ = ["RefactorHidden"]


class RefactorHidden(HiddenData):
    """What grading, the reference policy and the hacks know about a Refactor task."""

    #: The refactoring kind (``rename``, ``split_package``, ...).
    kind: str
    #: The module being refactored (import name).
    module: str
    #: Hidden differential call sequences (``{"t", "o", "a", "w"}`` steps; see ``spec``).
    checks: list[list[dict[str, Any]]]
    #: The original module's outcome of every step.
    expected: list[list[dict[str, Any]]]
    #: The public API the refactored code must keep.
    api: list[dict[str, Any]]
    #: Structure requirements (``structure.structure_score``).
    structure: list[dict[str, Any]]
    #: Integrity rules (aliases, kept names, ...; ``integrity.integrity_findings``).
    integrity: dict[str, Any] = Field(default_factory=dict)
    #: The original module files: path -> source, ``None`` when it is the starting file.
    original: dict[str, str | None] = Field(default_factory=dict)
    #: Changed lines a reference-sized refactoring may use.
    diff_budget: int
    #: Names a grounded note mentions.
    focus: list[str] = Field(default_factory=list)
    #: Files the reference deletes.
    reference_deleted: list[str] = Field(default_factory=list)
    #: The manifest's validation record of the task.
    validation: dict[str, Any] = Field(default_factory=dict)
