"""The leaderboard: models (and policies) compared from their results files.

``forgegym leaderboard RESULTS...`` and the dashboard's Leaderboard tab both call
:func:`build_leaderboard`: one row per policy of the files (a model's name for
``forgegym eval --model``), one column per family with the difficulty-weighted metric
and its 95% interval over tasks, and the aggregate over families
(:mod:`forgegym.play.aggregate`: Student-t intervals, valid for small evaluations).
Rows are ranked by the aggregate; equal values share a rank. Under the table, each row
is compared with the leader by a *paired* t-test on the tasks both played, which is
the honest test of "is the leader better": two overlapping intervals can still be a
clear paired difference.

The metric defaults to ``best`` (best-of-runs score, the seed's rule); ``score``
(mean of runs), ``success``, ``best_success``, ``pass@k`` and ``best@k`` are the
others. Rows are compared at equal runs: best-of-runs grows with the number of runs,
so when the files hold different numbers of runs per task, ``best`` becomes ``best@k``
and ``best_success`` becomes ``pass@k`` at the common k (the fewest runs of any task;
both unbiased from more runs), with a note; a ``pass@k`` or ``best@k`` that some row
cannot give is refused with the reason. The same difficulty weights and the same
per-family levels (the union over every file) are applied to every row.

Results files are checked against their tasks before anything is computed
(:func:`check_results`): scores in [0, 1], no episode twice, one family and level per
task across files, and, for a registered env played on its default bank, a task id of
that bank at its level.
"""

from __future__ import annotations

import html
import math
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
    "check_results",
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


#: Env kwargs that choose tasks outside the family's default bank (not checked there).
_OTHER_BANK_KWARGS = ("bank", "repo_path", "tasks", "task_bank")


def _bank_lookup() -> Any:
    """``(env_id, task_id) -> difficulty | KeyError``, with each family's default bank
    built once; ``None`` for an env id no forgegym family registered."""
    from forgegym.family import family_for_env

    banks: dict[str, Any] = {}

    def lookup(env_id: str, task_id: str) -> tuple[bool, int | None] | None:
        try:
            family = family_for_env(env_id)
        except ValueError:
            return None
        if family.name not in banks:
            banks[family.name] = family.make_task_bank()
        try:
            task = banks[family.name].get(task_id)
        except (KeyError, ValueError, IndexError):
            return (False, None)
        return (True, getattr(task, "difficulty", None))

    return lookup


def check_results(results: Sequence[tuple[str, Results]], *, tasks: bool = True) -> None:
    """Check results files against their tasks before they are compared.

    Every score in [0, 1]; no episode twice (same policy, task, run, index and seed);
    one family and difficulty level per task across every file; and (``tasks``) for an
    env a forgegym family registered, played on its default bank (the file records no
    ``env_kwargs`` choosing another), a task id of that bank at its own level.

    Raises:
        ValueError: the first problem, naming the file, the episode and the task.
    """
    seen: dict[tuple[str, str], tuple[str | None, int | None, str]] = {}
    lookup = _bank_lookup() if tasks else None
    checked: dict[tuple[str, str], tuple[bool, int | None] | None] = {}
    for source, result in results:
        env_kwargs = result.metadata.get("env_kwargs")
        other_bank = isinstance(env_kwargs, Mapping) and any(
            key in env_kwargs for key in _OTHER_BANK_KWARGS
        )
        episodes: set[tuple[str, str, str, int, int, int | None]] = set()
        for position, episode in enumerate(result.episodes):
            where = f"{source}: episode {position} ({episode.policy} on {episode.task_id})"
            if not (math.isfinite(episode.score) and 0.0 <= episode.score <= 1.0):
                raise ValueError(f"{where}: score {episode.score:g} is outside [0, 1]")
            key = (episode.env_id, episode.task_id)
            ident = (episode.policy, *key, episode.run, episode.index, episode.seed)
            if ident in episodes:
                raise ValueError(
                    f"{source}: run {episode.run} of {episode.policy} on {episode.env_id} "
                    f"{episode.task_id} (episode index {episode.index}) is in the file twice"
                )
            episodes.add(ident)
            first = seen.setdefault(key, (episode.family, episode.difficulty, source))
            if (episode.family, episode.difficulty) != first[:2]:
                raise ValueError(
                    f"task {episode.env_id} {episode.task_id}: family {episode.family}, level "
                    f"{episode.difficulty} in {source}, but family {first[0]}, level "
                    f"{first[1]} in {first[2]}"
                )
            if lookup is None or other_bank:
                continue
            if key not in checked:
                checked[key] = lookup(*key)
            found = checked[key]
            if found is None:  # not a forgegym env: nothing to check it against
                continue
            known, level = found
            if not known:
                raise ValueError(
                    f"{where}: {episode.task_id!r} is not a task of {episode.env_id}'s default "
                    "bank (a file edited by hand, or played with another bank: `forgegym "
                    "eval` records its --env-kwarg in the file; --no-task-check compares "
                    "anyway)"
                )
            if level is not None and episode.difficulty is not None and level != episode.difficulty:
                raise ValueError(
                    f"{where}: level {episode.difficulty}, but the task's level in "
                    f"{episode.env_id}'s bank is {level}"
                )


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


def _common_metric(metric: str, runs: Sequence[int]) -> tuple[str, str | None]:
    """The metric rows are compared on, and the note saying why it is not ``metric``:
    ``best`` and ``best_success`` at the common k when tasks have different runs."""
    fewest, most = min(runs), max(runs)
    if fewest == most or metric not in ("best", "best_success"):
        return metric, None
    common = f"best@{fewest}" if metric == "best" else f"pass@{fewest}"
    return common, (
        f"tasks were played {fewest} to {most} times: `{metric}` (best of every run) "
        f"favours whoever ran more, so every row is compared at a common k = {fewest} "
        f"({common}, estimated without bias from each task's runs)"
    )


def build_leaderboard(
    results: Sequence[tuple[str, Results]],
    *,
    metric: str = "best",
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    check_tasks: bool = True,
) -> Leaderboard:
    """The leaderboard of every policy in ``results`` (``(source, Results)`` pairs),
    checked first (:func:`check_results`; ``check_tasks=False`` skips the bank lookup).

    Raises:
        ValueError: no episodes, a file that fails the checks, or a metric some row
            cannot report (``pass@k`` with fewer than k runs).
    """
    check_results(results, tasks=check_tasks)
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
    metric, why = _common_metric(metric, [t.runs for _, _, tasks, _ in entries for t in tasks])
    notes: list[str] = [why] if why else []
    rows: list[LeaderboardRow] = []
    by_label: dict[str, list[TaskOutcome]] = {}
    for label, (_, source, tasks, result) in zip(labels, entries, strict=True):
        min_runs = min(t.runs for t in tasks)
        try:
            check_metric(metric, min_runs)
        except ValueError as exc:
            raise ValueError(
                f"metric: {label}: {str(exc).removeprefix('metric: ')} (rows are compared at "
                "equal runs: ask for a k every row played)"
            ) from None
        summary = summarise_policy(
            label,
            tasks,
            weights=weights,
            levels_of=levels_of,
            resamples=resamples,
            seed=seed,
            metrics=[metric],
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
    rows.sort(key=lambda r: (-round(r.aggregate.value, 12), r.name))
    for position, row in enumerate(rows):
        tied = position > 0 and round(row.aggregate.value, 12) == round(
            rows[position - 1].aggregate.value, 12
        )
        row.rank = rows[position - 1].rank if tied else position + 1
    differences: list[PairedDifference] = []
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
        f"on {d.shared_tasks} shared tasks (paired t-test p = {d.p_value:.3g})"
    )


def _caption(board: Leaderboard) -> str:
    return (
        f"metric {board.metric}, difficulty weights {_weights(board)} (easy→hard), "
        "95% t intervals over tasks; a family's cell and the aggregate are difficulty-weighted "
        "means (eval's summary table shows plain means)"
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
