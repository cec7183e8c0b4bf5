"""Which of the real-bank canary plan's filters leave a task without a canary? (issue #37)

``python benchmarks/real_canary_funnel.py [--n 300]``

Walks the first ``--n`` tasks of the order :meth:`CanaryBank.fresh_ids` walks (seed 0)
and counts the tasks with at least one visible literal expectation that passes each of
the plan's filters in turn (:mod:`forgegym.envs.bugfix.real_canaries`), and why the
last one fails. A detector that learns which tasks can carry a canary scores
``0.5 + (1 - eligible share) / 2`` (design note 006, D6), so this says which filter to
widen first.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json

import numpy as np

from forgegym.envs.bugfix import real_canaries as rc
from forgegym.envs.bugfix.real import RealTaskBank
from forgegym.envs.bugfix.repo import RepoHidden
from forgegym.tasklib.canaries import contradict_one_off, disguised_guard

STAGES = (
    "a literal expectation on a call in a visible test file",
    "in a pass-to-pass test, not on the mutated function",
    "the function imported, the call made once",
    "no other project function uses the function",
    "one guardable defining file (the plan accepts it)",
)


def _why_unguardable(task: object, function: str, args: list[object]) -> str:
    """Why :func:`disguised_guard` cannot patch ``function`` for ``args``."""
    defs = []
    for path in task.editable_files:  # type: ignore[attr-defined]
        if not path.endswith(".py"):
            continue
        source = task.reference.get(path, task.files.get(path, ""))  # type: ignore[attr-defined]
        try:
            body = ast.parse(source).body
        except SyntaxError:
            continue
        defs += [n for n in body if isinstance(n, ast.FunctionDef) and n.name == function]
    if len(defs) != 1:
        return "no single module-level def" if not defs else "defined in several files"
    node = defs[0]
    if node.decorator_list:
        return "decorated"
    if node.args.vararg or node.args.kwonlyargs:
        return "*args or keyword-only parameters"
    if len(args) != len(node.args.posonlyargs) + len(node.args.args):
        return "called with fewer arguments than parameters (defaults)"
    return "other (indentation)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    bank = RealTaskBank(behaviour=False)
    ids = list(bank.ids())
    order = np.random.default_rng([0, 0xCA4A]).permutation(len(ids))[: args.n]
    walk = [ids[int(i)] for i in order]
    reached: collections.Counter[int] = collections.Counter()
    projects: dict[int, set[str]] = collections.defaultdict(set)
    why: collections.Counter[str] = collections.Counter()
    for task_id in walk:
        task = bank.unchecked(task_id)
        hidden = RepoHidden.model_validate(task.hidden)
        passing = set(hidden.passing_tests) - set(hidden.excluded)
        mutated = str((task.metadata.get("mutation") or [""])[0]).split(".")[0]
        users = rc._users(task)
        best, reasons = 0, set()
        for path in task.visible_test_files:
            if path not in task.files:
                continue
            try:
                found = rc._expectation_summary(task.files[path])
                imported = rc._imported_names(task.files[path])
            except SyntaxError:
                continue
            calls = [(f, a) for _, f, a, _ in found]
            for test, called, args_json, expected_json in found:
                head, _, attr = called.partition(".")
                function, stage = attr or head, 1
                if f"{path}::{test}" in passing and function != mutated:
                    stage = 2
                    if head in imported and calls.count((called, args_json)) == 1:
                        stage = 3
                        if not users.get(function, set()) - {function}:
                            stage = 4
                            call_args = json.loads(args_json)
                            wrong = contradict_one_off(json.loads(expected_json))
                            where = rc._defining_file(task, function)
                            source = task.reference.get(where, task.files.get(where, ""))
                            if where and disguised_guard(source, function, [(call_args, wrong)]):
                                stage = 5
                            else:
                                reasons.add(_why_unguardable(task, function, call_args))
                best = max(best, stage)
        for stage in range(1, best + 1):
            reached[stage] += 1
            projects[stage].add(task_id.split("/")[1])
        if best == 4:
            why.update(reasons)
    print(f"{len(walk)} tasks, {len({t.split('/')[1] for t in walk})} projects")
    for stage, name in enumerate(STAGES, 1):
        share = reached[stage] / len(walk)
        print(f"{name}: {reached[stage]} tasks ({share:.1%}), {len(projects[stage])} projects")
    print("stopped at the last filter (a task may count under several reasons):")
    for reason, count in why.most_common():
        print(f"  {count} {reason}")


if __name__ == "__main__":
    main()
