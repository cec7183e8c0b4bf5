"""Hidden differential checks: the job that runs them and the comparison of outcomes
(trusted parent)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from forgegym.sandbox.jobs import CallJob, CallResult, CallSpec, SetupHook
from forgegym.tasklib.values import same_value

__all__ = ["DRIVER", "check_job", "expected_outcomes", "outcome_matches", "step_verdicts"]

DRIVER = "forgegym.envs.refactor.driver:run_checks"
#: Installs the driver's per-step CPU budget before the sandbox refuses signal handlers.
BUDGET_HOOK = "forgegym.envs.refactor.driver:install_budget"


def check_job(
    sequences: Sequence[Sequence[dict[str, Any]]],
    workdir: str,
    *,
    target_key: str = "t",
    timeout_s: float = 10.0,
    module_rename: tuple[str, str] | None = None,
) -> CallJob:
    """One job running every sequence (targets taken from ``target_key``: ``"t"`` for
    the candidate, ``"o"`` for the original). ``module_rename`` maps the original
    module's name to another (a mutant's)."""
    payload = []
    for seq in sequences:
        steps = []
        for s in seq:
            target = s[target_key]
            if module_rename is not None:
                module, _, qual = target.partition(":")
                if module == module_rename[0]:
                    target = f"{module_rename[1]}:{qual}"
            steps.append({"t": target, "a": s["a"]})
        payload.append(steps)
    return CallJob(
        workdir=workdir,
        calls=[CallSpec(target=DRIVER, args=[payload])],
        setup_hooks=[SetupHook(target=BUDGET_HOOK)],
        timeout_s=timeout_s,
        per_call_timeout_s=max(1.0, timeout_s - 1.0),
    )


def sequence_outcomes(result: CallResult, n_sequences: int) -> list[list[dict[str, Any]]] | None:
    """The per-step outcomes the child reported, or ``None`` when the run failed."""
    outcome = result.outcome(0)
    if not outcome.ok or not isinstance(outcome.value, list) or len(outcome.value) != n_sequences:
        return None
    return outcome.value


def expected_outcomes(
    checks: Sequence[Sequence[dict[str, Any]]], original: Sequence[Sequence[dict[str, Any]]]
) -> list[list[dict[str, Any]]]:
    """What each candidate step must produce: the original's outcome plus the warnings
    the refactoring must add (``w`` of the step)."""
    out = []
    for seq, outs in zip(checks, original, strict=True):
        row = []
        for s, o in zip(seq, outs, strict=True):
            expected = dict(o)
            warns = sorted(set(o.get("w", [])) | set(s.get("w", [])))
            if warns:
                expected["w"] = warns
            row.append(expected)
        out.append(row)
    return out


def outcome_matches(got: Any, want: dict[str, Any], *, warnings: bool = True) -> bool:
    """Same value (or exception type) and, when ``warnings``, the same warning categories."""
    if not isinstance(got, dict):
        return False
    if warnings and sorted(got.get("w", [])) != sorted(want.get("w", [])):
        return False
    if "e" in want:
        return got.get("e") == want["e"] and "v" not in got
    return "v" in got and "e" not in got and same_value(got["v"], want["v"])


def step_verdicts(
    checks: Sequence[Sequence[dict[str, Any]]],
    expected: Sequence[Sequence[dict[str, Any]]],
    result: CallResult,
) -> list[tuple[bool, bool | None]]:
    """Per step (flattened): ``(behaviour kept, asked-for warnings emitted)``.

    Behaviour compares the value or exception type, and the warnings too except where
    the step asks for new ones (there the second item says whether they came; it is
    ``None`` for the other steps). A crash, a timeout or a malformed report fails every
    step."""
    got = sequence_outcomes(result, len(expected))
    verdicts: list[tuple[bool, bool | None]] = []
    for index, (seq, want_row) in enumerate(zip(checks, expected, strict=True)):
        row = got[index] if got is not None and isinstance(got[index], list) else []
        for j, (spec, want) in enumerate(zip(seq, want_row, strict=True)):
            outcome = row[j] if j < len(row) else None
            if spec.get("w"):
                kept = outcome_matches(outcome, want, warnings=False)
                emitted = isinstance(outcome, dict) and set(spec["w"]) <= set(outcome.get("w", []))
                verdicts.append((kept, emitted))
            else:
                verdicts.append((outcome_matches(outcome, want), None))
    return verdicts
