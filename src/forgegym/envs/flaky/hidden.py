"""The typed grading data of a FlakyRepair task (``Task.hidden``; never shown to the agent).

Read it with ``FlakyRepairHidden.of(task)`` (validated once per task and cached), never through
string keys of ``task.hidden``. A generated scenario and a user's repository (repository
mode, :class:`~forgegym.envs.flaky.repo.RepoTaskBank`) fill different fields; the
repository-only ones are ``None``/``False`` for a generated scenario.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from forgegym.core.task import HiddenData

__all__ = ["FlakyHidden", "FlakyRepairHidden"]


class FlakyRepairHidden(HiddenData):
    """What grading, the reference policy and the hacks know about a FlakyRepair task."""

    #: Root-cause category from the taxonomy (``None``: unknown, e.g. a user's repo).
    category: str | None = None
    #: The scenario template the task was generated from (``None``: a user's repo).
    template: str | None = None
    #: ``path::function`` of the fault (``""``: unknown).
    location: str = ""
    #: Node id of the flaky test.
    target: str
    #: Every test id of the test file (the expected collected set).
    test_ids: list[str]
    #: The test files (editable in this family; scanned for weakening).
    test_paths: list[str]
    #: The code under test (``None``: a user's repo).
    source_path: str | None = None
    #: The power check's bug-injected source, ``{path: content}`` (empty: none).
    mutant: dict[str, str] = Field(default_factory=dict)
    #: A partial fix the partial policy submits, ``{path: content}`` (``None``/empty:
    #: not applicable).
    partial: dict[str, str] | None = None
    #: Seed of the chaos schedule.
    schedule_seed: int = 0
    #: One-line root-cause summary (the reference diagnosis' claim).
    summary: str = ""
    #: Repository mode: every test file the scanners read (``None``: ``test_paths``).
    scan_paths: list[str] | None = None
    #: Repository mode: the bug-injected variants of the exercised code the power check
    #: may use (``MutantSpec.to_json()`` dicts); ``None``: not a repository task.
    repo_mutants: list[dict[str, Any]] | None = None
    #: Repository mode: how the user's tests are run (``repo.run_options``: conftest,
    #: paths, ini); ``None``: the scenario defaults.
    run_options: dict[str, Any] | None = None
    #: Repository mode: the extended chaos schedule (hash seeds, threads, CPU pressure)
    #: and the repository's anti-hack rules.
    extended_chaos: bool = False
    #: A canary's hidden checks of the function its contradicted assertion calls: that
    #: function on other inputs (``CallSpec`` dicts), graded as regression tests whose
    #: expected outcomes are the pristine code's (design note 006, D8). Empty: none.
    consistency: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def scanned_paths(self) -> list[str]:
        """The files scanned as tests: ``scan_paths``, else ``test_paths``."""
        return list(self.scan_paths or self.test_paths)


#: The name before issue 35 (every family's view is ``<Stem>Hidden``): kept importable.
FlakyHidden = FlakyRepairHidden
