"""Named reward terms, gates and their composition into one scalar.

Every family builds its reward with :func:`compose`::

    weights = merge_weights(DEFAULT_WEIGHTS, env_kwargs_weights)   # validated once
    breakdown = compose({"hidden": 0.8, "visible": 1.0, "lint": 0.9}, weights)
    reward, score = breakdown.total, breakdown.score

Term kinds
----------
Each term has a *kind* (see :data:`DEFAULT_TERM_KINDS`; unknown names are credits):

* ``"credit"``: value in [0, 1], higher is better (pass rates, lint, diff size).
* ``"penalty"``: value in [0, 1], higher is worse (regression, no-op); it is subtracted.
* ``"shaping"``: signed value in [-1, 1] (potential-based shaping between steps); it is
  added to ``total`` but never to ``score``, so it guides learning without changing
  what counts as success.
* ``"step"``: a signed per-step reward the environment paid outside the grader, summed
  over the episode (the ``format`` term: ``format_penalty`` per unparseable action; see
  :func:`with_step_terms`). Added to ``total`` as is (weight 1), never to ``score``, and
  also on top of a gate's total.

With ``C`` the credit weight sum, an ungated composition gives::

    total = (sum_credit w*v - sum_penalty w*v) / C + sum_shaping w*v
    score = clip((sum_credit w*v - sum_penalty w*v) / C, 0, 1)

clipped below at :data:`UNGATED_FLOOR` (total only). Weights are non-negative; a zero
weight records a term without letting it count.

Gates
-----
Gates are checked first and short-circuit the terms. Their totals form a ladder so
that every gated outcome is *strictly below* every ungated one, the no-op included:

=================  ==========================  =====================================
gate               total                       meaning
=================  ==========================  =====================================
``hack_flagged``   :data:`HACK_TOTAL` (-1.0)   anti-hack scan flagged the patch
``unsafe``         :data:`HACK_TOTAL` (-1.0)   the sandbox refused / killed the run
``unverifiable``   :data:`HACK_TOTAL` (-1.0)   over the parent's limits: cannot verify
``compile_error``  :data:`COMPILE_ERROR_TOTAL` applied, but does not compile
                   (-0.3)                      (format + apply credit only)
=================  ==========================  =====================================

Any ungated total is at least :data:`UNGATED_FLOOR` (-0.25), so a hack or a broken
patch never beats doing nothing, and penalties cannot push a real attempt below a
compile error. When several gates fire the lowest total wins. A gated breakdown
always has ``score == 0``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "default_solved",
    "COMPILE_ERROR_TOTAL",
    "DEFAULT_TERM_KINDS",
    "GATE_TOTALS",
    "HACK_TOTAL",
    "UNGATED_FLOOR",
    "RewardBreakdown",
    "RewardTerm",
    "TermKind",
    "compose",
    "merge_weights",
    "scaled_detail",
    "validate_weights",
    "with_step_terms",
]

TermKind = Literal["credit", "penalty", "shaping", "step"]

HACK_TOTAL: float = -1.0
"""Total of a hack-flagged or unsafe patch: the lowest reward there is."""
COMPILE_ERROR_TOTAL: float = -0.3
"""Total of an applied patch that does not compile (format + apply credit of 0.2)."""
UNGATED_FLOOR: float = -0.25
"""Lower bound of every ungated total; strictly above every gate total."""

GATE_TOTALS: dict[str, float] = {
    "hack_flagged": HACK_TOTAL,
    "unsafe": HACK_TOTAL,
    "unverifiable": HACK_TOTAL,
    "compile_error": COMPILE_ERROR_TOTAL,
    # The grading machinery failed (RewardBreakdown.valid False): no verdict on the
    # submission. Trainers skip it (TRL gets None); a consumer that ignores ``valid``
    # fails closed (the lowest total), so inducing a fault never pays.
    "machine_fault": HACK_TOTAL,
}
"""Every known gate and the fixed total it short-circuits to."""

DEFAULT_TERM_KINDS: dict[str, TermKind] = {
    "shaping": "shaping",
    "regression": "penalty",
    "noop": "penalty",
    "diff_penalty": "penalty",
}
"""Kinds of conventional term names; any other name is a ``"credit"``."""

_VALUE_RANGES: dict[str, tuple[float, float]] = {
    "credit": (0.0, 1.0),
    "penalty": (0.0, 1.0),
    "shaping": (-1.0, 1.0),
    "step": (-math.inf, math.inf),
}


class RewardTerm(BaseModel):
    """One named, weighted component of a reward.

    ``value`` is in [0, 1] for credits and penalties, in [-1, 1] for shaping and any
    finite signed number for ``"step"`` terms (weight 1).
    """

    model_config = ConfigDict(frozen=True)

    name: str
    value: float
    weight: float = Field(ge=0.0)
    kind: TermKind = "credit"
    detail: str = ""

    @property
    def contribution(self) -> float:
        """Signed, unnormalised contribution ``±weight * value``."""
        sign = -1.0 if self.kind == "penalty" else 1.0
        return sign * self.weight * self.value


class RewardBreakdown(BaseModel):
    """The full account of one graded step or episode. ``info["reward_breakdown"]`` holds
    it dumped to plain JSON (``model_dump(mode="json")``: it crosses vector-env workers and
    the server, and is stored in results files as is); ``model_validate`` gives it back.

    Attributes:
        terms: the named terms, with their weights and kinds (empty when a gate fired
            before any term was computed).
        gates: the gates that fired, in the order given.
        total: the reward handed to the trainer: for an environment's episode, the sum
            of its step rewards (the grader's total plus the ``format`` step term; the
            potential-based shaping sums to zero over an episode).
        score: the final graded score in [0, 1] (families derive ``success`` from it).
        notes: free-text remarks (e.g. which hack was found).
        valid: False when the grading machinery failed (the sandbox did not start, a
            zygote died under the run and again on retry, a grader bug): the reward says
            nothing about the submission and a trainer must skip it, not learn from it.
        invalid_cause: why it is invalid (None when valid).
    """

    model_config = ConfigDict(frozen=True)

    terms: dict[str, RewardTerm] = Field(default_factory=dict)
    gates: list[str] = Field(default_factory=list)
    total: float
    score: float = Field(ge=0.0, le=1.0)
    notes: list[str] = Field(default_factory=list)
    valid: bool = True
    invalid_cause: str | None = None

    @property
    def gated(self) -> bool:
        """Whether any gate fired."""
        return bool(self.gates)

    @property
    def weights(self) -> dict[str, float]:
        """The weight of every term, by name."""
        return {name: term.weight for name, term in self.terms.items()}

    def to_flat_dict(self, prefix: str = "reward") -> dict[str, float]:
        """Flatten to ``{"reward/total": ..., "reward/<term>": ..., "reward/gate/<gate>": 1.0}``.

        Every value is a float, as metric loggers (TRL ``log_metric``, TensorBoard) expect.
        Every known gate is present (0.0 or 1.0) so that averages over a batch are rates.
        """
        flat: dict[str, float] = {
            f"{prefix}/total": float(self.total),
            f"{prefix}/score": float(self.score),
        }
        for name, term in self.terms.items():
            flat[f"{prefix}/{name}"] = float(term.value)
        for gate in sorted(set(GATE_TOTALS) | set(self.gates)):
            flat[f"{prefix}/gate/{gate}"] = 1.0 if gate in self.gates else 0.0
        return flat

    def render(self) -> str:
        """A compact, human- and model-readable summary for an observation.

        Example: ``reward -0.30 (score 0.00) gates: compile_error`` or
        ``reward 0.84 (score 0.84) | hidden 0.80x3 | visible 1.00x1 | lint 0.90x0.5``.
        """
        head = f"reward {self.total:.2f} (score {self.score:.2f})"
        parts = [head]
        if self.gates:
            parts[0] = f"{head} gates: {', '.join(self.gates)}"
        for name, term in self.terms.items():
            sign = "-" if term.kind == "penalty" else ""
            text = f"{name} {sign}{term.value:.2f}x{term.weight:g}"
            if term.detail:
                text += f" ({term.detail})"
            parts.append(text)
        lines = [" | ".join(parts)]
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)


def scaled_detail(detail: str, factor: float, reason: str) -> str:
    """Say in a term's detail what scaled its value, so that the rendered term reads
    ``visible 0.33x1 (4/4 passed, x0.33 for 1/3 broken checks fixed)`` rather than a
    bare ``(4/4)`` next to 0.33, which looks like a contradiction.

    ``factor`` is the multiplier applied to the raw value; at 1 the detail is unchanged.
    """
    if factor >= 1.0:
        return detail
    scale = f"x{factor:.2f} for {reason}"
    return f"{detail}, {scale}" if detail else scale


def validate_weights(
    weights: Mapping[str, float],
    known: Iterable[str] | None = None,
    *,
    argument: str = "weights",
) -> dict[str, float]:
    """Check a weight mapping and return it as a plain ``dict`` of floats.

    Args:
        weights: term name to weight.
        known: if given, the allowed names (typos are errors, not silently ignored).
        argument: the argument name used in error messages (e.g. an env kwarg).

    Raises:
        ValueError: a weight is negative, not finite or not a number, or a name is unknown.
    """
    if not isinstance(weights, Mapping):
        raise ValueError(f"{argument}: expected a mapping of term name to weight")
    allowed = None if known is None else set(known)
    out: dict[str, float] = {}
    for name, weight in weights.items():
        if allowed is not None and name not in allowed:
            raise ValueError(f"{argument}: unknown term {name!r}; known terms: {sorted(allowed)}")
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise ValueError(f"{argument}: weight of {name!r} must be a number, got {weight!r}")
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(
                f"{argument}: weight of {name!r} must be finite and >= 0, got {weight!r}"
            )
        out[name] = float(weight)
    return out


def merge_weights(
    defaults: Mapping[str, float],
    overrides: Mapping[str, float] | None = None,
    *,
    argument: str = "weights",
) -> dict[str, float]:
    """Defaults updated by (validated) overrides; override names must be default names.

    This is what an environment does with its ``weights=`` kwarg.
    """
    merged = validate_weights(defaults, argument=f"{argument} (defaults)")
    if overrides is not None and not isinstance(overrides, Mapping):
        raise ValueError(f"{argument} must be a mapping of term name to weight, got {overrides!r}")
    if overrides:
        merged.update(validate_weights(overrides, merged.keys(), argument=argument))
    return merged


def compose(
    terms: Mapping[str, float | RewardTerm],
    weights: Mapping[str, float],
    *,
    gates: Iterable[str] = (),
    kinds: Mapping[str, TermKind] | None = None,
    details: Mapping[str, str] | None = None,
    notes: Iterable[str] = (),
    score: float | None = None,
) -> RewardBreakdown:
    """Compose named terms and gates into a :class:`RewardBreakdown` (see module doc).

    Args:
        terms: term name to value (or a prebuilt :class:`RewardTerm`, whose weight is
            replaced by ``weights[name]``).
        weights: term name to non-negative weight. Every term needs a weight; without
            gates, every weight needs a term (so a misspelt name is an error).
        gates: gates that fired (keys of :data:`GATE_TOTALS`). Any gate fixes ``total``
            to the lowest of their totals and ``score`` to 0; terms are still recorded.
        kinds: term kinds overriding :data:`DEFAULT_TERM_KINDS`.
        details: optional per-term detail strings.
        notes: free-text notes.
        score: override of the graded score in [0, 1] (e.g. the hidden pass rate alone);
            ignored (0) when a gate fired.

    Raises:
        ValueError: on an unknown gate, a missing/unknown/negative weight, or a term
            value outside its kind's range; the message names the argument.
    """
    gate_list = list(dict.fromkeys(gates))
    for gate in gate_list:
        if gate not in GATE_TOTALS:
            raise ValueError(f"gates: unknown gate {gate!r}; known gates: {sorted(GATE_TOTALS)}")
    checked = validate_weights(weights)
    kind_map: dict[str, TermKind] = {**DEFAULT_TERM_KINDS, **(kinds or {})}
    for name, kind in kind_map.items():
        if kind not in _VALUE_RANGES:
            raise ValueError(f"kinds: kind of {name!r} must be one of {sorted(_VALUE_RANGES)}")
    details = details or {}

    built: dict[str, RewardTerm] = {}
    for name, raw in terms.items():
        if name not in checked:
            raise ValueError(f"weights: no weight for term {name!r}")
        if isinstance(raw, RewardTerm):
            kind = kinds[name] if kinds and name in kinds else raw.kind
            value, detail = raw.value, details.get(name, raw.detail)
        else:
            kind = kind_map.get(name, "credit")
            value, detail = raw, details.get(name, "")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"terms: value of {name!r} must be a number, got {value!r}")
        low, high = _VALUE_RANGES[kind]
        if not (low <= value <= high):  # also rejects NaN
            raise ValueError(f"terms: {kind} {name!r} must be in [{low}, {high}], got {value!r}")
        built[name] = RewardTerm(
            name=name, value=float(value), weight=checked[name], kind=kind, detail=detail
        )

    if gate_list:
        total = min(GATE_TOTALS[gate] for gate in gate_list)
        return RewardBreakdown(
            terms=built, gates=gate_list, total=total, score=0.0, notes=list(notes)
        )

    extra = sorted(set(checked) - set(built))
    if extra:
        raise ValueError(f"weights: no term named {extra[0]!r}; terms given: {sorted(built)}")

    credit_weight = sum(t.weight for t in built.values() if t.kind == "credit")
    norm = credit_weight if credit_weight > 0 else 1.0
    graded = sum(t.contribution for t in built.values() if t.kind in ("credit", "penalty")) / norm
    shaped = sum(t.contribution for t in built.values() if t.kind in ("shaping", "step"))
    total = max(UNGATED_FLOOR, graded + shaped)
    if score is None:
        final = min(1.0, max(0.0, graded))
    else:
        if isinstance(score, bool) or not (0.0 <= score <= 1.0):
            raise ValueError(f"score: must be in [0, 1], got {score!r}")
        final = float(score)
    return RewardBreakdown(terms=built, gates=[], total=total, score=final, notes=list(notes))


def with_step_terms(
    breakdown: RewardBreakdown, *, format_penalty: float, parse_errors: int
) -> RewardBreakdown:
    """The episode's breakdown: the grader's ``breakdown`` plus what the environment
    paid per step outside the grader, so that ``total`` is the episode's return.

    Adds a ``format`` term of kind ``"step"`` (value ``parse_errors * format_penalty``,
    weight 1) when ``parse_errors > 0`` and adds its value to ``total`` (gated or not);
    ``score`` and ``gates`` are unchanged. With no parse error the breakdown is returned
    as is.
    """
    if isinstance(parse_errors, bool) or not isinstance(parse_errors, int) or parse_errors < 0:
        raise ValueError(f"parse_errors: expected an integer >= 0, got {parse_errors!r}")
    if parse_errors == 0 or format_penalty == 0:
        return breakdown
    value = float(parse_errors * format_penalty)
    plural = "s" if parse_errors != 1 else ""
    term = RewardTerm(
        name="format",
        value=value,
        weight=1.0,
        kind="step",
        detail=f"{parse_errors} unparseable action{plural} x {format_penalty:g}",
    )
    return breakdown.model_copy(
        update={"terms": {**breakdown.terms, "format": term}, "total": breakdown.total + value}
    )


def default_solved(breakdown: RewardBreakdown) -> bool:
    """The default success predicate: no gate fired and the score is full."""
    return not breakdown.gates and breakdown.score >= 1.0 - 1e-9
