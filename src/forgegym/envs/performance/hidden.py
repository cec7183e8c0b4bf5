"""The typed grading data of a Performance task (``Task.hidden``; never shown to the agent)."""

from __future__ import annotations

from pydantic import Field

from forgegym.core.task import HiddenData

__all__ = ["PerformanceHidden"]


class PerformanceHidden(HiddenData):
    """What grading, the reference policy and the hacks know about a Performance task."""

    #: The catalog structure (``lru``, ``ttl``, ...; see :func:`.catalog.structure`).
    structure: str
    #: The workload profile that shapes the hidden traces.
    profile: str
    #: The starting implementation's kind (``naive``, ``stub``, a bug variant, ...).
    start: str
    #: Whether the starting code is already correct (only slow).
    start_correct: bool
    #: What the grader runs as "the reference" (correctness traces and timing),
    #: ``{path: content}``; empty: the task's reference. Only a canary sets it (an oracle
    #: that contradicts the contract the statement gives).
    oracle: dict[str, str] = Field(default_factory=dict)
