"""Does training move the reward? Measurements for a warm-started GRPO run.

:func:`measure_stage` samples a model's completions on held-out tasks (the GRPO
setting: several per prompt) and grades them with the environment's batch API, giving
the numbers that tell whether GRPO can learn at all: the fraction of completions that
parse as actions, the reward standard deviation within each prompt's group (GRPO's
advantage is zero without it), the mean reward and the success rate.

A :class:`LearningReport` (JSON, ``kind = "forgegym.integrations.learning"``) holds one
:class:`LearningStage` per point of a run (initial model, after SFT, after GRPO) and
GRPO's per-step log (reward, reward std, gradient norm, loss). ``benchmarks/learning.py``
writes it; ``forgegym plot learning REPORT.json -o curve.png`` draws it.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "GRPOStepLog",
    "LearningReport",
    "LearningStage",
    "grpo_step_logs",
    "learning_figure",
    "load_report",
    "measure_stage",
    "plot_learning",
]

REPORT_KIND: Literal["forgegym.integrations.learning"] = "forgegym.integrations.learning"


class LearningStage(BaseModel):
    """A model's behaviour on the held-out tasks at one point of a run."""

    model_config = ConfigDict(frozen=True)

    name: str
    completions: int = Field(ge=0)
    parse_rate: float = Field(ge=0.0, le=1.0, description="completions parsing as actions")
    reward_mean: float
    reward_std_within_group: float = Field(
        ge=0.0, description="mean over prompts of the std of their group's rewards"
    )
    groups_with_signal: float = Field(
        ge=0.0, le=1.0, description="fraction of prompt groups whose rewards are not all equal"
    )
    success_rate: float = Field(ge=0.0, le=1.0)


class GRPOStepLog(BaseModel):
    """One GRPO optimizer step as TRL logged it."""

    model_config = ConfigDict(frozen=True)

    step: int
    reward: float
    reward_std: float
    grad_norm: float
    loss: float
    groups_with_signal: float | None = Field(
        default=None, ge=0.0, le=1.0, description="fraction of groups with reward std > 0"
    )
    tool_call_frequency: float | None = None


class LearningReport(BaseModel):
    """Everything ``benchmarks/learning.py`` measured (the plot's input)."""

    kind: Literal["forgegym.integrations.learning"] = REPORT_KIND
    env_id: str
    settings: dict[str, Any] = Field(default_factory=dict)
    stages: list[LearningStage] = Field(default_factory=list)
    grpo: list[GRPOStepLog] = Field(default_factory=list)


def load_report(source: str | Path | Mapping[str, Any] | LearningReport) -> LearningReport:
    """A report from a path, a dict or a report; ``ValueError`` for any other JSON file."""
    if isinstance(source, LearningReport):
        return source
    data: Any = source
    if isinstance(source, (str, Path)):
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    if not isinstance(data, Mapping) or data.get("kind") != REPORT_KIND:
        raise ValueError(
            f"input: not a learning report (expected kind {REPORT_KIND!r}; "
            "write one with benchmarks/learning.py)"
        )
    return LearningReport.model_validate(data)


def grpo_step_logs(log_history: Sequence[Mapping[str, Any]]) -> list[GRPOStepLog]:
    """The per-step entries of a TRL ``trainer.state.log_history`` (training steps only)."""
    steps: list[GRPOStepLog] = []
    for entry in log_history:
        if "reward" not in entry or "grad_norm" not in entry:
            continue
        steps.append(
            GRPOStepLog(
                step=int(entry.get("step", len(steps) + 1)),
                reward=float(entry["reward"]),
                reward_std=float(entry.get("reward_std", 0.0)),
                grad_norm=float(entry["grad_norm"]),
                loss=float(entry.get("loss", 0.0)),
                groups_with_signal=(
                    1.0 - float(entry["frac_reward_zero_std"])
                    if "frac_reward_zero_std" in entry
                    else None
                ),
                tool_call_frequency=(
                    float(entry["tools/call_frequency"])
                    if "tools/call_frequency" in entry
                    else None
                ),
            )
        )
    return steps


def measure_stage(
    name: str,
    model: Any,
    tokenizer: Any,
    env: Any,
    rows: Sequence[Mapping[str, Any]],
    *,
    num_samples: int = 4,
    max_new_tokens: int = 128,
    temperature: float = 1.0,
    seed: int = 0,
) -> LearningStage:
    """Sample ``num_samples`` completions per row's prompt and grade them on ``env``.

    ``rows`` are ``make_dataset`` rows (``prompt``, ``task_id``); ``env`` is a
    single-turn environment of the same id (its ``grade_completions`` grades a group
    exactly as a single-turn ``step`` would).
    """
    from forgegym.integrations.warmstart import parses_as_action, sample_completions

    if not rows:
        raise ValueError("rows: at least one held-out row is needed")
    samples = sample_completions(
        model,
        tokenizer,
        [row["prompt"] for row in rows],
        num_samples=num_samples,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        seed=seed,
    )
    base = env.unwrapped
    rewards: list[float] = []
    stds: list[float] = []
    parsed = successes = 0
    for row, texts in zip(rows, samples, strict=True):
        graded = base.grade_completions(row["task_id"], texts)
        group = [float(value) for value, _ in graded]
        rewards.extend(group)
        stds.append(statistics.pstdev(group))
        parsed += sum(parses_as_action(env, text) for text in texts)
        successes += sum(_solved(base, breakdown) for _, breakdown in graded)
    total = len(rewards)
    return LearningStage(
        name=name,
        completions=total,
        parse_rate=parsed / total,
        reward_mean=statistics.fmean(rewards),
        reward_std_within_group=statistics.fmean(stds),
        groups_with_signal=sum(s > 1e-9 for s in stds) / len(stds),
        success_rate=successes / total,
    )


def _solved(env: Any, breakdown: Any) -> bool:
    """The family's success predicate (public ``solved`` where the env has one)."""
    judge = getattr(env, "solved", None) or getattr(env, "_success", None)
    if callable(judge):
        return bool(judge(breakdown))
    return not breakdown.gates and breakdown.score >= 1.0 - 1e-9


def plot_learning(source: Any, out: str | Path, *, dpi: int = 100) -> Path:
    """Write :func:`learning_figure` of a report (path, dict or model) to ``out``."""
    from forgegym.play.plots.common import _save

    return _save(learning_figure(source), out, dpi)


def learning_figure(source: Any) -> Any:
    """Stages side by side (parse rate, reward, within-group std, success) and GRPO's
    per-step reward, reward std and gradient norm."""
    from forgegym.play.plots.common import _agg

    report = load_report(source)
    plt = _agg()
    fig, (ax_stages, ax_curve) = plt.subplots(1, 2, figsize=(12.0, 5.0))
    metrics = ("parse_rate", "reward_mean", "reward_std_within_group", "success_rate")
    width = 0.8 / max(len(report.stages), 1)
    for index, stage in enumerate(report.stages):
        xs = [m + index * width for m in range(len(metrics))]
        ax_stages.bar(xs, [getattr(stage, m) for m in metrics], width, label=stage.name)
    ax_stages.set_xticks([m + 0.4 - width / 2 for m in range(len(metrics))])
    ax_stages.set_xticklabels(["parse rate", "mean reward", "reward std\nin group", "success"])
    ax_stages.axhline(0.0, color="0.5", linewidth=0.8)
    ax_stages.set_title("sampled completions, per stage")
    if report.stages:
        ax_stages.legend(fontsize="small")
    if report.grpo:
        steps = [s.step for s in report.grpo]
        ax_curve.plot(steps, [s.reward for s in report.grpo], marker="o", label="mean reward")
        ax_curve.plot(steps, [s.reward_std for s in report.grpo], marker="s", label="reward std")
        ax_norm = ax_curve.twinx()
        ax_norm.plot(
            steps, [s.grad_norm for s in report.grpo], color="C3", marker="^", label="grad norm"
        )
        ax_norm.set_ylabel("gradient norm", color="C3")
        ax_curve.set_xlabel("GRPO step")
        ax_curve.xaxis.get_major_locator().set_params(integer=True)
        lines = ax_curve.get_legend_handles_labels()
        norm_lines = ax_norm.get_legend_handles_labels()
        ax_curve.legend(lines[0] + norm_lines[0], lines[1] + norm_lines[1], loc="best")
    else:
        ax_curve.text(0.5, 0.5, "no GRPO steps", ha="center", va="center")
    ax_curve.set_title("GRPO training (train tasks)")
    fig.suptitle(f"learning check: {report.env_id}", fontsize=12)
    fig.tight_layout()
    return fig
