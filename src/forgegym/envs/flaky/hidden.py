"""The typed grading data of a FlakyRepair task (``Task.hidden``; never shown to the agent)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from forgegym.core.task import HiddenData

__all__ = ["FlakyHidden"]


class FlakyHidden(HiddenData):
    """What grading, the reference policy and the hacks know about a FlakyRepair task."""

    #: Root-cause category from the taxonomy (``None``: unknown, e.g. a user's repo).
    category: str | None = None
    #: The scenario template the task was generated from.
    template: str | None = None
    #: ``path::function`` of the fault (``""``: unknown).
    location: str = ""
    #: Node id of the flaky test.
    target: str
    #: Every test id of the test file (the expected collected set).
    test_ids: list[str]
    #: The test files (editable in this family; scanned for weakening).
    test_paths: list[str]
    #: The code under test.
    source_path: str | None = None
    #: The power check's mutant of the source (``{path: content}``-shaped; empty: none).
    mutant: dict[str, Any] | None = Field(default_factory=dict)
    #: A partial fix the partial policy submits (``None``: not applicable).
    partial: dict[str, Any] | None = None
    #: Seed of the chaos schedule.
    schedule_seed: int = 0
    #: One-line root-cause summary (the reference diagnosis' claim).
    summary: str = ""
    #: Repository mode: every test file the scanners read (default: ``test_paths``).
    scan_paths: list[str] | None = None
    #: Repository mode: the bug-injected variants of the code the power check uses.
    repo_mutants: list[Any] = Field(default_factory=list)
    #: Repository mode: how the user's tests are run (pytest options, layout).
    run_options: Any = None
    #: Repository mode: the extended chaos schedule (clock, CPU pressure, ...).
    extended_chaos: bool = False
