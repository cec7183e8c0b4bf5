"""``RefactorSpec``: everything one refactoring task is made of, before validation.

A spec holds the starting files, the reference refactoring (files written and files
deleted), the hidden differential checks, the expected public API, the structure
requirements and the integrity rules. Kind modules (:mod:`.kinds`) build specs; the
generator validates them in the sandbox; the bank turns them into
:class:`~forgegym.core.task.Task` objects.

Hidden check steps are ``{"t": target in the refactored code, "o": the same call in the
original module, "a": args, "w": warning categories the refactoring must add}``; a
sequence of steps runs from a fresh import of the workspace. The expected outcome of a
step is the original module's outcome of ``o`` (plus ``w``), computed in the sandbox
when the manifest is built.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RefactorSpec", "step"]


def step(
    target: str, origin: str, args: list[Any], warn: tuple[str, ...] = (), *, new: bool = False
) -> dict[str, Any]:
    """One hidden call: ``target`` in the candidate, ``origin`` in the original.

    ``warn``: warnings the refactoring must add (checked as structure, not behaviour);
    ``new``: ``target`` is a path the refactoring creates -- while it does not exist the
    step counts as structure not reached, once it exists it must behave like the
    original."""
    out: dict[str, Any] = {"t": target, "o": origin, "a": args}
    if warn:
        out["w"] = list(warn)
    if new:
        out["n"] = 1
    return out


@dataclass
class RefactorSpec:
    """One refactoring task (see the module docstring)."""

    kind: str
    module: str
    variant: str
    level: int
    title: str
    description: str
    files: dict[str, str]
    editable: tuple[str, ...]
    visible_tests: tuple[str, ...]
    visible_test_ids: tuple[str, ...]
    reference: dict[str, str]
    checks: list[list[dict[str, Any]]]
    api: list[dict[str, Any]]
    structure: list[dict[str, Any]]
    creatable: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    integrity: dict[str, Any] = field(default_factory=dict)
    #: The original module files (path -> source) the checks' ``o`` targets import and
    #: the mutants are made from (for most kinds: the starting module).
    original: dict[str, str] = field(default_factory=dict)
    #: Words a grounded review names (the functions or files the refactoring touches).
    focus: tuple[str, ...] = ()
    #: A much larger set of original-module call sequences (``{"t", "a"}`` steps), used
    #: offline only: a mutant that even these cannot tell from the original is counted
    #: as likely equivalent and left out of the kill rate's denominator.
    oracle_factory: Callable[[], list[list[dict[str, Any]]]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def oracle(self) -> list[list[dict[str, Any]]]:
        """The oracle sequences (built on demand: only validation needs them)."""
        return self.oracle_factory() if self.oracle_factory is not None else []

    @property
    def task_id(self) -> str:
        return f"refactor/{self.kind}/{self.module}/{self.variant}"

    @property
    def stateless(self) -> bool:
        """One sequence of independent calls (no state carried between steps)."""
        return len(self.checks) == 1 and not self.kind.startswith("state")

    def origin_sequences(self) -> list[list[dict[str, Any]]]:
        """The calls the original module must answer: for stateless checks each distinct
        ``(origin, args)`` once, in first-seen order; otherwise every sequence as is."""
        if not self.stateless:
            return [[{"t": s["o"], "a": s["a"]} for s in seq] for seq in self.checks]
        seen: dict[str, dict[str, Any]] = {}
        for s in self.checks[0]:
            seen.setdefault(
                json.dumps([s["o"], s["a"]], sort_keys=True), {"t": s["o"], "a": s["a"]}
            )
        return [list(seen.values())]

    def origin_outcomes_for_steps(
        self, outcomes: list[list[dict[str, Any]]]
    ) -> list[list[dict[str, Any]]]:
        """Map the original's outcomes (on :meth:`origin_sequences`) onto every step."""
        if not self.stateless:
            return outcomes
        index = {
            json.dumps([c["t"], c["a"]], sort_keys=True): o
            for c, o in zip(self.origin_sequences()[0], outcomes[0], strict=True)
        }
        return [[index[json.dumps([s["o"], s["a"]], sort_keys=True)] for s in self.checks[0]]]

    def usable(self, outcomes: list[list[dict[str, Any]]]) -> RefactorSpec:
        """This spec without the steps on which the original itself ran out of time (a
        step the original cannot answer says nothing about the candidate). For stateful
        sequences the whole sequence goes."""
        bad = {"StepTimeout", "Skipped"}
        per_step = self.origin_outcomes_for_steps(outcomes)
        checks: list[list[dict[str, Any]]] = []
        for seq, outs in zip(self.checks, per_step, strict=True):
            if self.stateless:
                checks.append([s for s, o in zip(seq, outs, strict=True) if o.get("e") not in bad])
            elif not any(o.get("e") in bad for o in outs):
                checks.append(list(seq))
        checks = [seq for seq in checks if seq]
        if checks == self.checks:
            return self
        return dataclasses.replace(self, checks=checks)

    @property
    def origin_key(self) -> str:
        """Identity of (original files, origin calls): tasks sharing it share outcomes
        and mutant-kill results."""
        blob = json.dumps(
            [sorted(self.original.items()), self.origin_sequences(), self.oracle], sort_keys=True
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:20]
