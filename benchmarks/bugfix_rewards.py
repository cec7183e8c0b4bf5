"""Bugfix's rewards on a fixed sample of its two banks (issue 35: one grading path).

Grades, through the public API (``gym.make`` and ``env.unwrapped.grade_completions``,
on the optimised and on the reference path), a fixed set of completions on:

* the generated bank: three tasks (the seed task, levels 1 and 3), each with the reference fix, the no-op and
  every registered hack (:data:`forgegym.envs.bugfix.hacks.HACKS`);
* the real bank built offline from the vendored ``textkit`` project
  (``tests/fixtures/textkit_bank.py``): three tasks, graded with their behaviour checks
  and again by their tests alone (``behaviour=False``), each with the reference fix, the
  no-op and every registered hack (the deleted-test hack among them);
* one ``grade_batch`` mixing a generated task and a real one (the env picks each
  task's grader).

The breakdowns are written as JSON, so two runs (before and after a refactoring of the
grading path) can be compared byte for byte::

    python benchmarks/bugfix_rewards.py --out before.json
    python benchmarks/bugfix_rewards.py --out after.json
    cmp before.json after.json

``tests/envs/bugfix/test_bugfix_rewards.py`` compares a run with the committed
``tests/fixtures/bugfix_rewards.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.core.task import Task, TaskList
from forgegym.envs.bugfix.bank import BugfixTaskBank
from forgegym.envs.bugfix.hacks import HACKS
from forgegym.family import get_family
from forgegym.policies import NOOP_ACTION

ROOT = Path(__file__).resolve().parents[1]
#: Generated-bank tasks: the seed task, a level-1 and a level-3 one.
BANK_TASKS = ("bugfix/chunk_list/seed", "bugfix/anagrams/d1/0", "bugfix/palindromes/d3/0")
#: The textkit bank's tasks the sample grades (by position in id order: three functions).
REAL_TASKS = (0, 8, 15)


def completions(task: Task) -> dict[str, str]:
    """The reference fix, the no-op and every registered hack of ``task``."""
    return {
        "reference": get_family("bugfix").reference_action()(task),
        "noop": NOOP_ACTION,
        **{name: hack(task) for name, hack in sorted(HACKS.items())},
    }


def _dump(graded: list[tuple[float, Any]], names: list[str]) -> dict[str, Any]:
    return {
        name: {"reward": reward, "breakdown": breakdown.model_dump(mode="json")}
        for name, (reward, breakdown) in zip(names, graded, strict=True)
    }


def _grade_tasks(make: Any, tasks: list[Task]) -> dict[str, Any]:
    """Each task's completions graded on the optimised and on the reference path."""
    out: dict[str, Any] = {}
    for optimised in (True, False):
        env = make(optimised)
        try:
            core = env.unwrapped
            for task in tasks:
                texts = completions(task)
                graded = core.grade_completions(task.task_id, list(texts.values()))
                path = "optimised" if optimised else "reference"
                out.setdefault(task.task_id, {})[path] = _dump(graded, list(texts))
        finally:
            env.close()
    return out


def bank_sample() -> dict[str, Any]:
    """The generated bank's seed tasks."""
    bank = BugfixTaskBank()
    tasks = [bank.get(task_id) for task_id in BANK_TASKS]
    return _grade_tasks(
        lambda optimised: gym.make("Forge/Bugfix-v0", max_steps=1, optimised_grading=optimised),
        tasks,
    )


@contextmanager
def textkit_bank(work: Path) -> Iterator[Path]:
    """The textkit bank built under ``work``, with the variables the real bank reads
    (its sdist cache, where projects unpack) set while it is in use."""
    sys.path.insert(0, str(ROOT))
    try:
        from tests.fixtures.textkit_bank import build_textkit_bank
    finally:
        sys.path.remove(str(ROOT))
    cache, out = build_textkit_bank(work)
    saved = {k: os.environ.get(k) for k in ("FORGEGYM_REAL_DIR", "FORGEGYM_SDIST_CACHE")}
    os.environ["FORGEGYM_REAL_DIR"] = str(work / "projects")
    os.environ["FORGEGYM_SDIST_CACHE"] = str(cache)
    try:
        yield out
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def real_sample(bank: Path, *, behaviour: bool = True) -> dict[str, Any]:
    """The :data:`REAL_TASKS` of the textkit bank, graded with their behaviour checks
    or (``behaviour=False``) by their tests alone."""
    from forgegym.envs.bugfix.real import RealTaskBank

    real = RealTaskBank(bank, allow_download=False, behaviour=behaviour)
    ids = sorted(real.ids())
    tasks = [real.get(ids[index]) for index in REAL_TASKS]
    return _grade_tasks(
        lambda optimised: gym.make(
            "Forge/Bugfix-v0",
            task_bank=RealTaskBank(bank, allow_download=False, behaviour=behaviour),
            max_steps=1,
            optimised_grading=optimised,
        ),
        tasks,
    )


def mixed_sample(bank: Path) -> dict[str, Any]:
    """One ``grade_batch`` over a generated task and a real one, interleaved."""
    from forgegym.envs.bugfix.real import RealTaskBank

    real = RealTaskBank(bank, allow_download=False)
    tasks = [BugfixTaskBank().get(BANK_TASKS[0]), real.get(sorted(real.ids())[0])]
    items: list[tuple[str, str]] = []
    names: list[str] = []
    for name in ("reference", "noop"):
        for task in tasks:
            items.append((task.task_id, completions(task)[name]))
            names.append(f"{task.task_id} {name}")
    env = gym.make("Forge/Bugfix-v0", task_bank=TaskList(tasks), max_steps=1)
    try:
        return _dump(env.unwrapped.grade_batch(items), names)
    finally:
        env.close()


def grade_sample() -> dict[str, Any]:
    """Every sample's breakdowns: ``{sample: {task: {path: {completion: ...}}}}``."""
    work = Path(tempfile.mkdtemp(prefix="fg-bugfix-rewards-"))
    try:
        with textkit_bank(work) as bank:
            return {
                "bank": bank_sample(),
                "real": real_sample(bank),
                "real_tests_only": real_sample(bank, behaviour=False),
                "mixed": mixed_sample(bank),
            }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def to_text(sample: dict[str, Any]) -> str:
    """The JSON text compared byte for byte."""
    return json.dumps(sample, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON")
    args = parser.parse_args()
    args.out.write_text(to_text(grade_sample()), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
