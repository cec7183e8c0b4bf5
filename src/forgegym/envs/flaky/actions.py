"""FlakyRepair's action models: the code actions, where ``edit`` and ``submit`` may
carry a root-cause :class:`Diagnosis`."""

from __future__ import annotations

from pydantic import Field

from forgegym.core.actions import (
    ActionModel,
    ActionSet,
    EditAction,
    LintAction,
    ListAction,
    PlanAction,
    ReadAction,
    ReflectAction,
    ReviewAction,
    RunTestsAction,
    SearchAction,
    SubmitAction,
)

__all__ = ["ACTIONS", "FLAKY_ACTIONS", "Diagnosis", "FlakyEditAction", "FlakySubmitAction"]


class Diagnosis(ActionModel):
    """A root-cause claim: category from the taxonomy, ``path::func`` location,
    calibrated confidence and free-text claims."""

    category: str = Field(min_length=1, description="Root-cause category from the taxonomy.")
    location: str = Field(default="", description='"path::function" of the root cause.')
    confidence: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Probability that the category is right."
    )
    claims: list[str] = Field(default_factory=list, description="Short factual claims.")


class FlakyEditAction(EditAction):
    """Apply edits to the workspace, optionally stating the root cause."""

    diagnosis: Diagnosis | None = Field(default=None, description="Root-cause diagnosis.")


class FlakySubmitAction(SubmitAction):
    """Submit for final grading (ends the episode), optionally stating the root cause."""

    diagnosis: Diagnosis | None = Field(default=None, description="Root-cause diagnosis.")


FLAKY_ACTIONS: tuple[type[ActionModel], ...] = (
    FlakyEditAction,
    RunTestsAction,
    ListAction,
    ReadAction,
    SearchAction,
    LintAction,
    PlanAction,
    ReviewAction,
    ReflectAction,
    FlakySubmitAction,
)

#: The action set ``Forge/FlakyRepair-v0`` parses (every family names it ``ACTIONS``;
#: ``FLAKY_ACTIONS`` are its models).
ACTIONS: ActionSet = ActionSet(FLAKY_ACTIONS)
