"""Grading: the batch API every family grades through, and the code families' template.

* :func:`~forgegym.grading.batch.grade_many` grades many submissions at once over the
  sandbox pool (a GRPO group is one batch, not a loop), with the
  :class:`~forgegym.grading.batch.Grader` / ``StagedGrader`` protocols;
* :class:`~forgegym.grading.code_grader.CodeGrader` is the template the code families
  fill in (gates, sandbox jobs, terms, compose);
* :mod:`~forgegym.grading.phases` marks where the parent's grading time goes (defined in
  :mod:`forgegym.rewards.phases`, the lowest layer that marks a phase).

Layer: above ``core``, ``rewards`` and ``sandbox``; below the families (``envs``).
"""

from __future__ import annotations

from forgegym.grading.batch import Grader, Note, StagedGrader, Submission, grade_many
from forgegym.grading.code_grader import CodeGrader, GradingState, ResultGate

__all__ = [
    "CodeGrader",
    "Grader",
    "GradingState",
    "Note",
    "ResultGate",
    "StagedGrader",
    "Submission",
    "grade_many",
]
