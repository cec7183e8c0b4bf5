"""The typed grading data of a Bugfix task (``Task.hidden``; never shown to the agent)."""

from __future__ import annotations

from typing import Any

from forgegym.core.task import HiddenData
from forgegym.tasklib.corpus import HiddenCall

__all__ = ["BugfixHidden"]


class BugfixHidden(HiddenData):
    """What grading, the reference policy and the hacks know about a Bugfix task."""

    #: Corpus module name (``chunk_list``).
    module: str
    #: The differential checks: the reference's outputs on many inputs.
    calls: list[HiddenCall]
    #: Indices of the calls the bug breaks (fail-to-pass); the others must keep passing.
    failing_hidden: list[int]
    #: The injected mutations, as ``[function, operator, site]``.
    mutations: list[list[Any]]
    #: The buggy file's path.
    mutated_file: str
    #: The functions the mutations changed (what a grounded note names).
    mutated_functions: list[str]
    #: Every public function of the module.
    module_functions: list[str]
    #: Changed lines of the reference fix (the diff budget is twice this).
    fix_lines: int
    #: Index of the call the symptom report shows (symptom-only tasks), else ``None``.
    symptom_call: int | None = None
