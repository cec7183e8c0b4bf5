"""Are higher levels harder? A navigator that reads only the statement, played through
the env, and the partial policy, per level of the real bank (issue 39, must-show 3).

``python benchmarks/real_bank/levels.py [--bank DIR] [--per-level 30] [--seed 0] [--partial 12]``

Levels are the factory's feature level (1-4; two-bug tasks one above their harder part)
plus the statement style's offset (``traceback`` +0, ``assertion`` +1, ``symptom`` +2), as
``gym.make("Forge/Bugfix-v0", bank=..., statements="all")`` serves them. For a seeded
sample of each level:

* **Steps to the bug** of a navigator that does not know where the bug is. It plays the
  env's own ``search`` and ``read`` actions, one per step, from the first observation's
  bug report: it reads the library files the report's frames name, then searches for
  the definitions of the identifiers the report mentions and reads the files with the
  most of them, then every other editable file. It stops when it has read every file the
  reference changes (an oracle stop, as the ``navigate`` policy knows the fix: what is
  measured is how far the statement leads it, not whether it can write the fix).
* **The partial policy's score** on two-bug tasks (it fixes the first bug and leaves the
  second; on a one-bug task it is the whole fix): graded through the env, so the score
  per level shows what the second bug costs.

Each row has the mean with a 95% Student t interval over tasks. Writes
``benchmarks/results/levels.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import gymnasium as gym
from rich.console import Console
from rich.table import Table

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.envs.bugfix.real import REAL_BANK_DIR, RealTaskBank
from forgegym.envs.bugfix.statements import LEVEL_OFFSET, STATEMENT_STYLES
from forgegym.play.aggregate import t_quantile
from forgegym.tasklib.factory.build import read_manifest
from forgegym.tasklib.factory.compose import apply_parts, entry_parts

_LOCATION = re.compile(r"^\s*(?P<path>[^\s:]+\.py):\d+:", re.MULTILINE)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_HIT = re.compile(r"^(?P<path>[^\s:]+\.py):\d+: ", re.MULTILINE)
#: The search action's pattern limit (``SearchAction.pattern``'s ``max_length``).
_PATTERN_CHARS = 200


def _report(observation: str) -> str:
    """The bug report: the observation before its repository map."""
    return observation.split("## Repository map", 1)[0]


def _definition_pattern(words: list[str]) -> str | None:
    """One regular expression for the definitions of as many of ``words`` (longest,
    i.e. most distinctive, first) as fit the search action's limit."""
    chosen: list[str] = []
    for word in sorted(set(words), key=lambda w: (-len(w), w)):
        candidate = r"(def|class) (" + "|".join([*chosen, word]) + r")\b"
        if len(candidate) > _PATTERN_CHARS:
            break
        chosen.append(word)
    return r"(def|class) (" + "|".join(chosen) + r")\b" if chosen else None


def steps_to_bug(env: Any, task_id: str, max_steps: int) -> int:
    """Steps the statement-reading navigator takes to read every file the fix changes."""
    observation, _ = env.reset(options={"task_id": task_id})
    task = env.unwrapped.task
    targets = set(task.reference)
    editable = sorted(task.editable_files)
    report = _report(observation)
    seen: set[str] = set()
    steps = 0

    def read(path: str) -> bool:
        nonlocal steps
        steps += 1
        env.step(json.dumps({"action": "read", "path": path, "start": 1, "end": 40}))
        seen.add(path)
        return targets <= seen

    order: list[str] = []
    for match in _LOCATION.finditer(report):
        for path in editable:
            if (path.endswith(match["path"]) or match["path"].endswith(path)) and path not in order:
                order.append(path)
    for path in order:
        if read(path):
            return steps
    pattern = _definition_pattern(_IDENTIFIER.findall(report))
    if pattern is not None and steps < max_steps - 1:
        steps += 1
        observation, *_ = env.step(
            json.dumps({"action": "search", "pattern": pattern, "regex": True})
        )
        result = observation.rsplit("## Result of your last action", 1)[-1]
        hits: dict[str, int] = defaultdict(int)
        for hit in _HIT.finditer(result):
            hits[hit["path"]] += 1
        for path in sorted(hits, key=lambda p: (-hits[p], p)):
            if path in task.files and path not in seen and read(path):
                return steps
    for path in editable:
        if path not in seen and read(path):
            return steps
    return steps


def _partial_score(env: Any, task_id: str, entry: dict[str, Any]) -> float:
    """The partial policy on a two-bug task: the first bug fixed, the second left."""
    task = env.task_bank.get(task_id)
    second = entry_parts(entry)[1]
    half = apply_parts(task.reference, [second])
    edits = [{"path": p, "content": half.get(p, c)} for p, c in sorted(task.reference.items())]
    action = json.dumps([{"action": "edit", "edits": edits}, {"action": "submit"}])
    ((reward, _),) = env.grade_completions(task_id, [action])
    return float(reward)


def _interval(values: list[float]) -> tuple[float, float, float]:
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean, mean
    half = t_quantile(0.975, len(values) - 1) * statistics.stdev(values) / len(values) ** 0.5
    return mean, mean - half, mean + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bank", default=str(REAL_BANK_DIR))
    parser.add_argument("--per-level", type=int, default=30, help="tasks drawn per level")
    parser.add_argument("--partial", type=int, default=12, help="tasks graded per level")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/levels.json")
    args = parser.parse_args()
    console = Console()
    rng = random.Random(args.seed)
    started = time.monotonic()
    by_level: dict[int, list[str]] = defaultdict(list)
    entries: dict[str, dict[str, Any]] = {}
    for manifest in sorted(Path(args.bank).glob("*.jsonl.gz")):
        if manifest.name.endswith(".reverted.jsonl.gz"):
            continue
        for entry in read_manifest(manifest):
            entries[entry["id"]] = entry
            for style in STATEMENT_STYLES:
                suffix = "" if style == "traceback" else f"@{style}"
                by_level[int(entry["level"]) + LEVEL_OFFSET[style]].append(entry["id"] + suffix)
    max_steps = 400
    # The navigator only reads: its bank skips the behaviour checks (built at a task's
    # first reset, seconds to minutes each); the partial policy is graded with them.
    manifests = () if args.bank == str(REAL_BANK_DIR) else (args.bank,)
    reader = RealTaskBank(*manifests, statements=STATEMENT_STYLES, behaviour=False)
    nav_env = gym.make("Forge/Bugfix-v0", task_bank=reader, max_steps=max_steps).unwrapped
    env = gym.make("Forge/Bugfix-v0", bank=args.bank, statements="all", max_steps=2).unwrapped
    rows: dict[str, dict[str, Any]] = {}
    try:
        for level in sorted(by_level):
            pool = by_level[level]
            sample = rng.sample(pool, min(args.per_level, len(pool)))
            steps = [float(steps_to_bug(nav_env, task_id, max_steps)) for task_id in sample]
            two_bug = [t for t in pool if len(entry_parts(entries[t.split("@")[0]])) == 2]
            graded = rng.sample(two_bug, min(args.partial, len(two_bug)))
            scores: list[float] = []
            for task_id in graded:
                reward = _partial_score(env, task_id, entries[task_id.split("@")[0]])
                scores.append(float(reward))
            rows[str(level)] = {
                "tasks": len(pool),
                "navigator_steps": _interval(steps),
                "navigator_n": len(steps),
                "partial_score": _interval(scores) if scores else None,
                "partial_n": len(scores),
            }
            console.print(level, rows[str(level)])
    finally:
        nav_env.close()
        env.close()
    table = Table(title=f"levels of {args.bank} (seed {args.seed})")
    for column in ("level", "tasks", "navigator steps (95% CI)", "partial score (95% CI)"):
        table.add_column(column)
    for level, row in rows.items():
        mean, low, high = row["navigator_steps"]
        partial = row["partial_score"]
        table.add_row(
            level,
            str(row["tasks"]),
            f"{mean:.1f} [{low:.1f}, {high:.1f}] (n={row['navigator_n']})",
            f"{partial[0]:.2f} [{partial[1]:.2f}, {partial[2]:.2f}] (n={row['partial_n']})"
            if partial
            else "no two-bug tasks",
        )
    console.print(table)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "bank": args.bank,
                "seed": args.seed,
                "seconds": round(time.monotonic() - started, 1),
                "levels": rows,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
