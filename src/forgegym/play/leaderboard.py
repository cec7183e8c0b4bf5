"""The leaderboard: models (and policies) compared from their results files.

``forgegym leaderboard RESULTS...`` and the dashboard's Leaderboard tab both call
:func:`build_leaderboard`: one row per policy of the files (a model's name for
``forgegym eval --model``), one column per family with the difficulty-weighted metric
and its bootstrap 95% interval, and the aggregate over families
(:mod:`forgegym.play.aggregate`). Rows are ranked by the aggregate. Under the table,
each row is compared with the leader by a *paired* bootstrap on the tasks both
played, which is the honest test of "is the leader better": two overlapping
intervals can still be a clear paired difference.

The metric defaults to ``best`` (best-of-runs score, the seed's rule); ``score``
(mean of runs), ``success``, ``best_success`` and ``pass@k`` are the others. The same
difficulty weights and the same per-family levels (the union over every file) are
applied to every row, so rows are comparable.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from forgegym.play.aggregate import (
    DEFAULT_RESAMPLES,
    DEFAULT_WEIGHTS,
    Interval,
    PairedDifference,
    TaskOutcome,
    check_metric,
    paired_difference,
    summarise_policy,
    task_outcomes,
)
from forgegym.play.results import Results

__all__ = [
    "Leaderboard",
    "LeaderboardRow",
    "build_leaderboard",
    "load_results",
    "to_html",
    "to_markdown",
    "to_rich",
]


class LeaderboardRow(BaseModel):
    """One policy or model."""

    rank: int
    name: str
    source: str = Field(description="the results file it came from")
    tasks: int
    runs: int = Field(description="the fewest runs of any of its tasks")
    episodes: int
    families: dict[str, Interval | None]
    aggregate: Interval
    usage: dict[str, Any] | None = None


class Leaderboard(BaseModel):
    """The table and the paired differences with the leader."""

    metric: str
    weights: list[float]
    families: list[str]
    rows: list[LeaderboardRow]
    differences: list[PairedDifference]
    notes: list[str] = Field(default_factory=list)


def load_results(paths: Sequence[str | Path]) -> list[tuple[str, Results]]:
    """``(file name, results)`` for each path; ``ValueError`` naming a bad file."""
    loaded = []
    for path in paths:
        source = Path(path)
        if not source.is_file():
            raise ValueError(f"{path}: no such results file")
        try:
            loaded.append((str(path), Results.load(source)))
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    return loaded


def _levels(results: Sequence[tuple[str, Results]]) -> dict[str, list[int]]:
    """Per family, every level a file declares (``metadata["levels"]``) or played."""
    levels: dict[str, set[int]] = {}
    for _, result in results:
        declared = result.metadata.get("levels")
        if isinstance(declared, Mapping):
            for family, values in declared.items():
                if isinstance(values, list):
                    levels.setdefault(str(family), set()).update(
                        int(v) for v in values if isinstance(v, int)
                    )
        for episode in result.episodes:
            if episode.difficulty is not None:
                levels.setdefault(episode.family or episode.env_id, set()).add(episode.difficulty)
    return {family: sorted(values) for family, values in levels.items()}


def build_leaderboard(
    results: Sequence[tuple[str, Results]],
    *,
    metric: str = "best",
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Leaderboard:
    """The leaderboard of every policy in ``results`` (``(source, Results)`` pairs).

    Raises:
        ValueError: no episodes, or a metric some row cannot report (``pass@k`` with
            fewer than k runs).
    """
    entries: list[tuple[str, str, list[TaskOutcome], Results]] = []
    for source, result in results:
        for policy, tasks in task_outcomes(result.episodes).items():
            entries.append((policy, source, tasks, result))
    if not entries:
        raise ValueError("results: the files hold no episodes")
    names = [policy for policy, *_ in entries]
    labels = [
        policy if names.count(policy) == 1 else f"{policy} ({Path(source).name})"
        for policy, source, *_ in entries
    ]
    levels_of = _levels(results)
    families = sorted({t.family for _, _, tasks, _ in entries for t in tasks})
    rows: list[LeaderboardRow] = []
    by_label: dict[str, list[TaskOutcome]] = {}
    for label, (_, source, tasks, result) in zip(labels, entries, strict=True):
        min_runs = min(t.runs for t in tasks)
        try:
            check_metric(metric, min_runs)
        except ValueError as exc:
            raise ValueError(f"metric: {label}: {exc}") from None
        summary = summarise_policy(
            label, tasks, weights=weights, levels_of=levels_of, resamples=resamples, seed=seed
        )
        per_family: dict[str, Interval | None] = dict.fromkeys(families)
        for cell in summary.cells:
            if cell.level == "all":
                per_family[cell.family] = cell.metrics[metric]
        usage = result.metadata.get("usage")
        rows.append(
            LeaderboardRow(
                rank=0,
                name=label,
                source=source,
                tasks=len(tasks),
                runs=min_runs,
                episodes=sum(t.runs for t in tasks),
                families=per_family,
                aggregate=summary.aggregate.metrics[metric],
                usage=usage if isinstance(usage, dict) else None,
            )
        )
        by_label[label] = tasks
    rows.sort(key=lambda r: (-r.aggregate.value, r.name))
    for rank, row in enumerate(rows, start=1):
        row.rank = rank
    differences: list[PairedDifference] = []
    notes: list[str] = []
    partial = {row.name for row in rows if any(v is None for v in row.families.values())}
    if partial:
        notes.append(
            "not every row played every family: aggregates over different families "
            f"are not comparable ({', '.join(sorted(partial))})"
        )
    leader = rows[0]
    for row in rows[1:]:
        try:
            differences.append(
                paired_difference(
                    by_label[leader.name],
                    by_label[row.name],
                    names=(leader.name, row.name),
                    metric=metric,
                    weights=weights,
                    levels_of=levels_of,
                    resamples=resamples,
                    seed=seed,
                )
            )
        except ValueError as exc:
            notes.append(f"{leader.name} vs {row.name}: {exc}")
    return Leaderboard(
        metric=metric,
        weights=[float(w) for w in weights],
        families=families,
        rows=rows,
        differences=differences,
        notes=notes,
    )


# ------------------------------------------------------------------ rendering
def _cell(value: Interval | None) -> str:
    return "–" if value is None else f"{value.value:.3f} [{value.low:.3f}, {value.high:.3f}]"


def _weights(board: Leaderboard) -> str:
    total = sum(board.weights) or 1.0
    return "/".join(f"{100 * w / total:g}" for w in board.weights)


def _header(board: Leaderboard) -> list[str]:
    return ["rank", "model", *board.families, "aggregate", "tasks", "runs"]


def _row(row: LeaderboardRow, board: Leaderboard) -> list[str]:
    return [
        str(row.rank),
        row.name,
        *(_cell(row.families[f]) for f in board.families),
        _cell(row.aggregate),
        str(row.tasks),
        str(row.runs),
    ]


def _difference(d: PairedDifference) -> str:
    x = d.difference
    return (
        f"{d.a} − {d.b}: {x.value:+.3f} [{x.low:+.3f}, {x.high:+.3f}] "
        f"on {d.shared_tasks} shared tasks (paired bootstrap p = {d.p_value:.3g})"
    )


def _caption(board: Leaderboard) -> str:
    return (
        f"metric {board.metric}, difficulty weights {_weights(board)} (easy→hard), "
        "95% bootstrap intervals over tasks"
    )


def to_markdown(board: Leaderboard) -> str:
    """A GitHub-flavoured markdown table, its caption and the paired differences."""
    header = _header(board)
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---:" if h in ("rank", "tasks", "runs") else "---" for h in header) + "|",
    ]
    for row in board.rows:
        cells = [c.replace("|", "\\|") for c in _row(row, board)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"*{_caption(board)}*"]
    if board.differences:
        lines += ["", "Paired differences with the leader:", ""]
        lines += [f"- {_difference(d)}" for d in board.differences]
    lines += [f"- note: {note}" for note in board.notes]
    return "\n".join(lines) + "\n"


def to_html(board: Leaderboard) -> str:
    """A standalone HTML page with the table and the paired differences."""
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in _header(board))
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in _row(row, board)) + "</tr>"
        for row in board.rows
    )
    items = "".join(f"<li>{esc(_difference(d))}</li>" for d in board.differences)
    notes = "".join(f"<li>{esc(n)}</li>" for n in board.notes)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>forgegym leaderboard</title>"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}</style></head><body>"
        f"<h1>forgegym leaderboard</h1><table><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody><caption>{esc(_caption(board))}</caption></table>"
        f"<h2>Paired differences with the leader</h2><ul>{items}</ul>"
        + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "")
        + "</body></html>\n"
    )


def to_rich(board: Leaderboard) -> list[Any]:
    """Renderables for a ``rich`` console: the table, then the differences."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="forgegym leaderboard", caption=_caption(board))
    for column in _header(board):
        table.add_column(column, justify="right" if column in ("rank", "tasks", "runs") else "left")
    for row in board.rows:
        table.add_row(*_row(row, board))
    out: list[Any] = [table]
    out += [Text(_difference(d)) for d in board.differences]
    out += [Text(f"note: {note}", style="yellow") for note in board.notes]
    return out
