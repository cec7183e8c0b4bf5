"""How a task's hidden checks grow by its adequacy steps: the manifest's ``adequacy``
record of an original (boundary inputs, property-based draws, long stateful sequences,
with the original's outcomes) replayed through every refactored path of the task.

Kept apart from :mod:`.adequacy` (which draws and measures them, and reads the bank) so
that the bank can merge them without importing the tooling that reads the bank.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from forgegym.envs.refactor.spec import RefactorSpec

__all__ = ["merged_checks", "step_templates"]


def step_templates(spec: RefactorSpec) -> dict[str, list[dict[str, Any]]]:
    """Original target -> the distinct step shapes (``t``, ``w``, ``n``) the task's
    own checks use for it: every refactored path that must behave like it."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for seq in spec.checks:
        for s in seq:
            shape = {k: v for k, v in s.items() if k != "a"}
            out.setdefault(str(s["o"]), {})[json.dumps(shape, sort_keys=True)] = shape
    return {o: list(shapes.values()) for o, shapes in out.items()}


def merged_checks(
    spec: RefactorSpec,
    checks: list[list[dict[str, Any]]],
    outcomes: list[list[dict[str, Any]]],
    entry: Mapping[str, Any] | None,
) -> tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]]:
    """``checks`` and the original's ``outcomes`` with the adequacy steps of ``entry``
    (a manifest ``adequacy`` record) appended: each adequacy call once per refactored
    target of its original function; stateless steps join the one sequence, stateful
    sequences are added as they are."""
    if not entry:
        return checks, outcomes
    templates = step_templates(spec)
    extra_checks: list[list[dict[str, Any]]] = []
    extra_outcomes: list[list[dict[str, Any]]] = []
    for seq, outs in zip(entry["sequences"], entry["outcomes"], strict=True):
        if spec.stateless:
            row = [
                ({**shape, "a": s["a"]}, o)
                for s, o in zip(seq, outs, strict=True)
                for shape in templates.get(s["o"], ())
            ]
            extra_checks.append([s for s, _ in row])
            extra_outcomes.append([o for _, o in row])
            continue
        shapes = [templates.get(s["o"], []) for s in seq]
        if not all(shapes):
            continue
        # A sequence replays through each refactored path in turn (the state the path
        # builds must behave like the original's over the whole sequence).
        for variant in range(max(len(s) for s in shapes)):
            extra_checks.append(
                [{**sh[variant % len(sh)], "a": s["a"]} for s, sh in zip(seq, shapes, strict=True)]
            )
            extra_outcomes.append(list(outs))
    if spec.stateless and checks:
        return (
            [checks[0] + [s for row in extra_checks for s in row], *checks[1:]],
            [outcomes[0] + [o for row in extra_outcomes for o in row], *outcomes[1:]],
        )
    return [*checks, *extra_checks], [*outcomes, *extra_outcomes]


# ---------------------------------------------------------------- sandbox runs
