"""Independent-mutant kill rate of Refactor's grading, per kind and held-out half (issue #37).

``python benchmarks/refactor_kill_rate.py [--tasks 12] [--all-of reduce_complexity,state_to_object]
[--kinds ...] [--per-task 40] [--seed 0] [--out results.json] [--merge old.json]``

For a seeded sample of tasks of every kind (``--tasks`` per kind; every task of the
``--all-of`` kinds), the task's *reference refactoring* gets one subtle behaviour change
at a time from an operator set written with libcst for this benchmark and used nowhere
else (neither the task generators' bug engine nor :mod:`forgegym.tasklib.operators`, the
set the adequacy inputs were tuned on):

* ``boundary``: ``<`` <-> ``<=``, ``>`` <-> ``>=``;
* ``constant``: an integer or float literal ``-1`` / ``+1``;
* ``stmt_swap``: two adjacent statements of a block exchanged;
* ``elem_swap``: two adjacent elements of a list, tuple or dict display exchanged;
* ``bool_flip``: ``True`` <-> ``False``, ``and`` <-> ``or``, ``not x`` -> ``x``;
* ``default``: a parameter default changed (``None`` -> ``0``, a string emptied, a
  number ``+1``, a boolean flipped);
* ``drop_else``: an ``else`` / ``elif`` dropped, ``a if c else b`` -> ``b``;
* ``arith``: ``+`` <-> ``-``, ``+=`` <-> ``-=``, ``min`` <-> ``max``, ``break`` <->
  ``continue``.

At most ``--per-task`` mutants per task (seeded, round-robin over operators). Each mutant
is graded by the env's grader (:class:`~forgegym.envs.refactor.grader.RefactorGrader`,
visible tests on, through :func:`~forgegym.grading.batch.grade_many`): a mutant that
reaches success is a *survivor*. A survivor is then replayed on a fuzzing set much
larger than the hidden checks (:func:`~forgegym.envs.refactor.reference_mutants.fuzz_checks`)
next to the unmutated reference (run twice; unstable steps ignored): where it differs it
is *missed* (a behaviour change that reaches success), else *possibly equivalent* (left
out of the rate).

Tasks split in two halves by a hash of their original (``origin_key``) and ``--seed``:
``A`` (looked at while tuning the checks) and ``B`` (held out). Per kind and half the
table shows mutants, those killed by the visible tests, those killed by the hidden
checks only, those gated (compile, integrity), the possibly equivalent, the missed, and
the kill rate (killed / (mutants - possibly equivalent)). Results (every record) go to
``--out``; ``--merge`` adds an earlier run's records for kinds not measured now.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import libcst as cst

RESULTS = Path(__file__).parent / "results" / "refactor_kill_rate.json"
KINDS = (
    "rename_alias",
    "split_package",
    "dead_code",
    "extract_helper",
    "reduce_complexity",
    "state_to_object",
)
OPERATORS = (
    "boundary",
    "constant",
    "stmt_swap",
    "elem_swap",
    "bool_flip",
    "default",
    "drop_else",
    "arith",
)


# ------------------------------------------------------------------- operators
@dataclass(frozen=True)
class CstMutant:
    """One mutant of a module: the operator, a description and the code."""

    operator: str
    description: str
    source: str


_BOUNDARY: dict[type[cst.BaseCompOp], type[cst.BaseCompOp]] = {
    cst.LessThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.LessThan,
    cst.GreaterThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
}
_FLOW = (cst.Return, cst.Raise, cst.Continue, cst.Break, cst.Pass)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _swappable(statement: cst.CSTNode) -> bool:
    """A statement whose exchange with its neighbour is a behaviour change worth a
    mutant (not a definition, an import, a docstring or a jump: those give equivalent
    or dead-code mutants)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or _is_docstring(statement):
        return False
    if isinstance(statement, cst.SimpleStatementLine):
        return not any(isinstance(s, (cst.Import, cst.ImportFrom, *_FLOW)) for s in statement.body)
    return True


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


# (description, replacement) for one node.
Variants = list[tuple[str, Callable[[], cst.CSTNode]]]


def _variants(operator: str, node: cst.CSTNode) -> Variants:  # noqa: C901 - one table
    out: Variants = []
    if operator == "boundary" and isinstance(node, cst.Comparison):
        for i, target in enumerate(node.comparisons):
            new = _BOUNDARY.get(type(target.operator))
            if new is None:
                continue
            old = type(target.operator).__name__

            def flip(i: int = i, new: type[cst.BaseCompOp] = new) -> cst.CSTNode:
                items = list(node.comparisons)
                items[i] = items[i].with_changes(operator=new())
                return node.with_changes(comparisons=items)

            out.append((f"{old} -> {new.__name__} (comparison {i})", flip))
    elif operator == "constant" and isinstance(node, (cst.Integer, cst.Float)):
        value = node.evaluated_value
        for delta in (-1, 1):
            new_value = value + delta
            if new_value < 0:
                continue  # a literal has no sign; -1 of 0 would need a UnaryOperation
            text = repr(new_value)
            maker: Callable[[], cst.CSTNode] = (
                (lambda t=text: cst.Integer(t))
                if isinstance(node, cst.Integer)
                else (lambda t=text: cst.Float(t))
            )
            out.append((f"constant {node.value} {delta:+d}", maker))
    elif operator == "stmt_swap" and isinstance(node, (cst.IndentedBlock, cst.Module)):
        body = list(node.body)
        for i in range(len(body) - 1):
            a, b = body[i], body[i + 1]
            if not (_swappable(a) and _swappable(b)) or _code(a) == _code(b):
                continue

            def swap(i: int = i) -> cst.CSTNode:
                items = list(node.body)
                items[i], items[i + 1] = items[i + 1], items[i]
                return node.with_changes(body=items)

            out.append((f"statements {i} and {i + 1} swapped", swap))
    elif operator == "elem_swap" and isinstance(node, (cst.List, cst.Tuple, cst.Dict)):
        items = list(node.elements)
        for i in range(len(items) - 1):
            if _code(items[i].with_changes(comma=cst.MaybeSentinel.DEFAULT)) == _code(
                items[i + 1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            ):
                continue

            def swap_elements(i: int = i) -> cst.CSTNode:
                elems = list(node.elements)
                first, second = elems[i], elems[i + 1]
                elems[i] = second.with_changes(comma=first.comma)
                elems[i + 1] = first.with_changes(comma=second.comma)
                return node.with_changes(elements=elems)

            out.append(
                (f"{type(node).__name__.lower()} elements {i} and {i + 1} swapped", swap_elements)
            )
    elif operator == "bool_flip":
        if isinstance(node, cst.Name) and node.value in ("True", "False"):
            other = "False" if node.value == "True" else "True"
            out.append((f"{node.value} -> {other}", lambda o=other: cst.Name(o)))
        elif isinstance(node, cst.BooleanOperation):
            new_op: cst.BaseBooleanOp = (
                cst.Or() if isinstance(node.operator, cst.And) else cst.And()
            )
            out.append(
                (
                    f"{_code(node.operator).strip()} flipped",
                    lambda: node.with_changes(operator=new_op),
                )
            )
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            out.append(("not dropped", lambda: node.expression))
    elif operator == "default" and isinstance(node, cst.Param) and node.default is not None:
        default = node.default
        new_default: cst.BaseExpression | None = None
        if isinstance(default, cst.Name) and default.value == "None":
            new_default = cst.Integer("0")
        elif isinstance(default, cst.Name) and default.value in ("True", "False"):
            new_default = cst.Name("False" if default.value == "True" else "True")
        elif isinstance(default, cst.SimpleString):
            new_default = cst.SimpleString('""' if default.evaluated_value else '"x"')
        elif isinstance(default, cst.Integer):
            new_default = cst.Integer(str(default.evaluated_value + 1))
        if new_default is not None:
            nd = new_default
            out.append(
                (
                    f"default of {node.name.value} {_code(default)} -> {_code(nd)}",
                    lambda: node.with_changes(default=nd),
                )
            )
    elif operator == "drop_else":
        if isinstance(node, cst.If) and node.orelse is not None:
            label = "elif" if isinstance(node.orelse, cst.If) else "else"
            out.append((f"{label} dropped", lambda: node.with_changes(orelse=None)))
        elif isinstance(node, cst.IfExp):
            out.append(("conditional expression keeps its else value", lambda: node.orelse))
    elif operator == "arith":
        if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.Add, cst.Subtract)
        ):
            op: cst.BaseBinaryOp = (
                cst.Subtract() if isinstance(node.operator, cst.Add) else cst.Add()
            )
            out.append(
                (f"{_code(node.operator).strip()} flipped", lambda: node.with_changes(operator=op))
            )
        elif isinstance(node, cst.AugAssign) and isinstance(
            node.operator, (cst.AddAssign, cst.SubtractAssign)
        ):
            aug: cst.BaseAugOp = (
                cst.SubtractAssign()
                if isinstance(node.operator, cst.AddAssign)
                else cst.AddAssign()
            )
            out.append(
                (f"{_code(node.operator).strip()} flipped", lambda: node.with_changes(operator=aug))
            )
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value in ("min", "max")
        ):
            other_fn = "max" if node.func.value == "min" else "min"
            out.append(
                (
                    f"{node.func.value} -> {other_fn}",
                    lambda: node.with_changes(func=cst.Name(other_fn)),
                )
            )
        elif isinstance(node, cst.Break):
            out.append(("break -> continue", lambda: cst.Continue()))
        elif isinstance(node, cst.Continue):
            out.append(("continue -> break", lambda: cst.Break()))
    return out


class _Mutator(cst.CSTTransformer):
    """Counts the sites of ``operator`` in a fixed order (post-order) and replaces the
    ``target``-th variant (``target`` < 0: count only)."""

    def __init__(self, operator: str, target: int = -1) -> None:
        super().__init__()
        self.operator = operator
        self.target = target
        self.count = 0
        self.description = ""
        self._docstrings: set[int] = set()

    def on_leave(self, original_node: Any, updated_node: Any) -> Any:  # type: ignore[override]
        if isinstance(original_node, (cst.Annotation,)):
            return updated_node
        variants = _variants(self.operator, updated_node)
        for description, make in variants:
            if self.count == self.target:
                self.description = description
                self.count += 1
                return make()
            self.count += 1
        return updated_node

    def visit_Annotation(self, node: cst.Annotation) -> bool:
        return False  # annotations are not behaviour


def cst_mutants(source: str, operators: Sequence[str] = OPERATORS) -> list[CstMutant]:
    """Every distinct mutant of ``source`` that compiles and differs from it."""
    module = cst.parse_module(source)
    seen = {module.code}
    out: list[CstMutant] = []
    for operator in operators:
        counter = _Mutator(operator)
        module.visit(counter)
        for index in range(counter.count):
            mutator = _Mutator(operator, index)
            code = module.visit(mutator).code
            if code in seen:
                continue
            try:
                compile(code, "<mutant>", "exec", dont_inherit=True)
            except (SyntaxError, ValueError):
                continue
            seen.add(code)
            out.append(CstMutant(operator, mutator.description, code))
    return out


def pick(found: Sequence[tuple[str, CstMutant]], n: int, seed: str) -> list[tuple[str, CstMutant]]:
    """At most ``n`` of ``found``: seeded, round-robin over operators (each operator's
    mutants shuffled), so a module with many constants does not crowd out the rest."""
    rng = random.Random(seed)
    by_op: dict[str, list[tuple[str, CstMutant]]] = {}
    for item in found:
        by_op.setdefault(item[1].operator, []).append(item)
    for items in by_op.values():
        rng.shuffle(items)
    chosen: list[tuple[str, CstMutant]] = []
    while len(chosen) < n and any(by_op.values()):
        for op in OPERATORS:
            if by_op.get(op) and len(chosen) < n:
                chosen.append(by_op[op].pop())
    return chosen


def half_of(origin_key: str, seed: int) -> str:
    """``A`` (tuning) or ``B`` (held out), fixed by the task's original and the seed."""
    return "A" if hashlib.sha256(f"{seed}\0{origin_key}".encode()).digest()[0] % 2 == 0 else "B"


# ------------------------------------------------------------------ measuring
@dataclass
class Record:
    """One graded mutant."""

    task_id: str
    kind: str
    half: str
    path: str
    operator: str
    description: str
    success: bool
    visible_killed: bool
    hidden_killed: bool
    gated: bool
    #: Survivors only: differs from the reference on the fuzzing set.
    detectable: bool | None = None


def _grade(env: Any, task: Any, changes: Sequence[dict[str, str]]) -> list[Any]:
    """The env's breakdown of the reference refactoring with each of ``changes`` written
    over it (one ``edit`` + ``submit`` completion each, graded as a batch by
    :meth:`~forgegym.envs.code_grading.CodeGrading.grade_completions`)."""
    from forgegym.envs.refactor.policies import action_text, edits_for, reference_files

    files, deleted = reference_files(task)
    completions = [action_text(edits_for(task, {**files, **change}, deleted)) for change in changes]
    return [breakdown for _, breakdown in env.grade_completions(task.task_id, completions)]


def _outcome(breakdown: Any) -> dict[str, bool]:
    from forgegym.envs.refactor.grader import RefactorGrader

    terms = breakdown.terms
    gated = bool(breakdown.gates)
    visible = not gated and "visible" in terms and terms["visible"].value < 1.0
    hidden = (
        not gated
        and not visible
        and "behaviour" in terms
        and (terms["behaviour"].value < 1.0 or terms["api"].value < 1.0)
    )
    return {
        "success": RefactorGrader.solved(breakdown),
        "visible_killed": visible,
        "hidden_killed": hidden,
        "gated": gated,
    }


def wide_checks(spec: Any, *, seed: int = 11, size: int = 6000) -> list[list[dict[str, Any]]]:
    """For a stateless original taking a list of numbers: every one-item list from
    ``-3`` to twice the largest number the code spells (+2), and ``size`` seeded pairs,
    triples and longer lists over that range (repeats, ``None``), replayed through every
    refactored path: inputs drawn apart from the adequacy draws, so a mutant the
    checks and the fuzzing set both miss is not called equivalent on their say-so."""
    from forgegym.envs.refactor.adequacy import _source, observed_calls
    from forgegym.envs.refactor.adequacy_checks import merged_checks
    from forgegym.envs.refactor.adequacy_inputs import folded_numbers, number_lists

    if not spec.stateless:
        return []
    slots = number_lists(observed_calls(spec))
    if not slots:
        return []
    rng = random.Random(f"wide:{seed}:{spec.origin_key}")
    numbers = [n for n in folded_numbers(_source(spec)) if n > 0] or [10]
    top = 2 * max(numbers) + 2
    drawn: list[dict[str, Any]] = []
    for function, positions in sorted(slots.items()):
        for position, args in positions:
            lists: list[list[Any]] = [[v] for v in range(-3, top + 1)]
            for _ in range(size):
                length = rng.choice([2, 2, 3, 3, 4, 5, 6, 8, 10, 12, 14])
                lists.append(
                    [
                        None if rng.random() < 0.04 else rng.randint(-top // 4, top)
                        for _ in range(length)
                    ]
                )
            for values in lists:
                new = list(args)
                new[position] = values
                drawn.append({"o": f"{spec.module}:{function}", "a": new})
    placeholder = [[{} for _ in drawn]]
    checks, _ = merged_checks(spec, [], [], {"sequences": [drawn], "outcomes": placeholder})
    return [seq for seq in checks if seq]


def _detectable(task: Any, spec: Any, mutants: list[dict[str, str]], runner: Any) -> list[bool]:
    """Per survivor (its changed files): whether the fuzzing set tells it from the
    unmutated reference (two reference runs; steps that differ between them ignored)."""
    from forgegym.envs.refactor.adequacy import _workdir
    from forgegym.envs.refactor.checking import outcome_matches
    from forgegym.envs.refactor.reference_mutants import (
        _differs,
        _fuzz_of,
        _job,
        candidate_tree,
        fuzz_checks,
    )

    fuzz = fuzz_checks(spec, seed=7) + wide_checks(spec)  # another seed than the checks'
    tree = candidate_tree(task)
    dirs = [_workdir(tree)] + [_workdir({**tree, **m}) for m in mutants]
    try:
        jobs = [_job(dirs[0], [fuzz, fuzz], 30.0)] + [_job(d, [fuzz], 30.0) for d in dirs[1:]]
        results = list(runner.run_many(jobs))
        # A run that did not finish (a loaded host's time-out) is retried once: a
        # failed run would otherwise count as a difference.
        failed = [
            i
            for i, r in enumerate(results)
            if _fuzz_of(r, 0, len(fuzz)) is None or (i == 0 and _fuzz_of(r, 1, len(fuzz)) is None)
        ]
        if failed:
            for i, r in zip(failed, runner.run_many([jobs[i] for i in failed]), strict=True):
                results[i] = r
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    first, second = _fuzz_of(results[0], 0, len(fuzz)), _fuzz_of(results[0], 1, len(fuzz))
    if first is None or second is None:
        return [True] * len(mutants)  # cannot tell: count as missed (pessimistic)
    stable = [
        [outcome_matches(a, b) for a, b in zip(ra, rb, strict=True)]
        for ra, rb in zip(first, second, strict=True)
    ]
    return [_differs(_fuzz_of(r, 0, len(fuzz)), first, stable) for r in results[1:]]


def measure_task(
    env: Any, task: Any, spec: Any, runner: Any, *, per_task: int, seed: int
) -> tuple[bool, list[Record]]:
    """The reference's success, and every picked mutant of the task graded."""
    from forgegym.envs.refactor.reference_mutants import mutable_files

    found = [(path, m) for path in mutable_files(task) for m in cst_mutants(task.reference[path])]
    chosen = pick(found, per_task, f"{seed}:{task.task_id}")
    breakdowns = _grade(env, task, [{}, *({p: m.source} for p, m in chosen)])
    reference_ok = _outcome(breakdowns[0])["success"]
    kind = task.task_id.split("/")[1]
    half = half_of(spec.origin_key, seed)
    records = [
        Record(task.task_id, kind, half, path, m.operator, m.description, **_outcome(b))
        for (path, m), b in zip(chosen, breakdowns[1:], strict=True)
    ]
    survivors = [i for i, r in enumerate(records) if r.success]
    if survivors:
        flags = _detectable(
            task, spec, [{chosen[i][0]: chosen[i][1].source} for i in survivors], runner
        )
        for i, flag in zip(survivors, flags, strict=True):
            records[i].detectable = flag
    return reference_ok, records


def reclassify(
    records: list[Record],
    *,
    per_task: int,
    seed: int,
    runner: Any,
    env: Any = None,
    failed_references: list[str] | None = None,
) -> None:
    """Redo the equivalence check of every survivor in ``records`` (in place) with the
    current oracle: each task's mutants are picked again (deterministic) and matched
    to its records in order. With ``env``, every task's reference and its survivors are
    first graded again with the current checks; mutants killed before are not (a
    redraw keeps every input family and adds to them, though hypothesis draws under a
    time budget may come out differently); a failing reference's task id goes to
    ``failed_references``."""
    from forgegym.envs.refactor.bank import RefactorTaskBank, find_spec
    from forgegym.envs.refactor.reference_mutants import mutable_files

    bank = RefactorTaskBank()
    by_task: dict[str, list[Record]] = {}
    for r in records:
        by_task.setdefault(r.task_id, []).append(r)
    for task_id, mine in by_task.items():
        survivors = [i for i, r in enumerate(mine) if r.success]
        if not survivors and env is None:
            continue
        task = bank.get(task_id)
        found = [(p, m) for p in mutable_files(task) for m in cst_mutants(task.reference[p])]
        chosen = pick(found, per_task, f"{seed}:{task_id}")
        assert [(p, m.operator, m.description) for p, m in chosen] == [
            (r.path, r.operator, r.description) for r in mine
        ], task_id
        if env is not None:
            graded = _grade(
                env, task, [{}, *({chosen[i][0]: chosen[i][1].source} for i in survivors)]
            )
            if not _outcome(graded[0])["success"] and failed_references is not None:
                failed_references.append(task_id)
            for i, breakdown in zip(survivors, graded[1:], strict=True):
                for key, value in _outcome(breakdown).items():
                    setattr(mine[i], key, value)
                mine[i].detectable = None
            survivors = [i for i in survivors if mine[i].success]
            if not survivors:
                continue
        flags = _detectable(
            task,
            find_spec(task_id),
            [{chosen[i][0]: chosen[i][1].source} for i in survivors],
            runner,
        )
        for i, flag in zip(survivors, flags, strict=True):
            mine[i].detectable = flag


def table_rows(records: Sequence[Record]) -> list[dict[str, Any]]:
    """Per kind and half: the counts of the table."""
    rows = []
    for kind in KINDS:
        for half in ("A", "B"):
            mine = [r for r in records if r.kind == kind and r.half == half]
            if not mine:
                continue
            equivalent = sum(r.success and r.detectable is False for r in mine)
            missed = sum(r.success and r.detectable is not False for r in mine)
            counted = len(mine) - equivalent
            rows.append(
                {
                    "kind": kind,
                    "half": half,
                    "tasks": len({r.task_id for r in mine}),
                    "mutants": len(mine),
                    "visible": sum(r.visible_killed for r in mine),
                    "hidden": sum(r.hidden_killed for r in mine),
                    "gated": sum(r.gated for r in mine),
                    "possibly_equivalent": equivalent,
                    "missed": missed,
                    "tasks_missed": len(
                        {r.task_id for r in mine if r.success and r.detectable is not False}
                    ),
                    "kill_rate": (counted - missed) / counted if counted else 1.0,
                }
            )
    return rows


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """The table as markdown (for docs/rewards.md)."""
    head = (
        "| kind | half | tasks | mutants | killed by visible tests | by hidden checks / API "
        "| gated | possibly equivalent | missed (tasks) | kill rate |"
    )
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        lines.append(
            f"| {r['kind']} | {r['half']} | {r['tasks']} | {r['mutants']} | {r['visible']} "
            f"| {r['hidden']} | {r['gated']} | {r['possibly_equivalent']} "
            f"| {r['missed']} ({r['tasks_missed']}) | {r['kill_rate']:.1%} |"
        )
    return "\n".join(lines)


def print_table(rows: Sequence[dict[str, Any]], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    columns = (
        "kind",
        "half",
        "tasks",
        "mutants",
        "visible",
        "hidden",
        "gated",
        "possibly_equivalent",
        "missed",
        "tasks_missed",
        "kill_rate",
    )
    for c in columns:
        table.add_column(c.replace("_", " "), justify="left" if c == "kind" else "right")
    for row in rows:
        table.add_row(*(f"{row[c]:.1%}" if c == "kill_rate" else str(row[c]) for c in columns))
    Console(width=160).print(table)


def main(argv: list[str] | None = None) -> None:
    from forgegym.envs.refactor.bank import RefactorTaskBank, find_spec, load_manifest
    from forgegym.sandbox.runners import get_default_runner

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--tasks", type=int, default=12, help="tasks per kind (sampled)")
    parser.add_argument(
        "--all-of", default="reduce_complexity,state_to_object", help="kinds measured on every task"
    )
    parser.add_argument("--per-task", type=int, default=40, help="mutants per task at most")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--merge", type=Path, default=None, help="earlier results to keep")
    parser.add_argument("--list-missed", action="store_true")
    parser.add_argument(
        "--regrade", action="store_true", help="with --reclassify: grade the survivors again"
    )
    parser.add_argument(
        "--reclassify",
        type=Path,
        default=None,
        help="redo the survivors' equivalence check of these results (no grading)",
    )
    args = parser.parse_args(argv)
    if args.reclassify is not None:
        old = json.loads(args.reclassify.read_text())
        kept = [Record(**r) for r in old["records"]]
        kinds_now = [k for k in args.kinds.split(",") if k]
        redo = [r for r in kept if r.kind in kinds_now]
        regrade_env = None
        if args.regrade:
            from forgegym.envs.refactor.env import RefactorEnv

            regrade_env = RefactorEnv(task_bank=RefactorTaskBank(), max_steps=1)
            old["failed_references"] = [
                t for t in old.get("failed_references", []) if t.split("/")[1] not in kinds_now
            ]
        for kind in kinds_now:
            reclassify(
                [r for r in redo if r.kind == kind],
                per_task=old.get("per_task_by_kind", {}).get(kind, args.per_task),
                seed=old["seed"],
                runner=get_default_runner(),
                env=regrade_env,
                failed_references=old.setdefault("failed_references", []),
            )
        old["records"] = [asdict(r) for r in kept]
        old["rows"] = table_rows(kept)
        print_table(old["rows"], f"Reclassified: {args.reclassify}")
        args.out.write_text(json.dumps(old, indent=1) + "\n")
        return
    kinds = [k for k in args.kinds.split(",") if k]
    every = {k for k in args.all_of.split(",") if k}
    entries = load_manifest()["tasks"]
    ids: list[str] = []
    for kind in kinds:
        mine = sorted(e["task_id"] for e in entries if e["kind"] == kind)
        if kind not in every:
            mine = sorted(
                random.Random(f"{args.seed}:{kind}").sample(mine, min(args.tasks, len(mine)))
            )
        ids += mine
    from forgegym.envs.refactor.env import RefactorEnv

    bank = RefactorTaskBank()
    runner = get_default_runner()
    env = RefactorEnv(task_bank=bank, max_steps=1)
    records: list[Record] = []
    failed_references: list[str] = []
    start = time.perf_counter()
    for n, task_id in enumerate(ids, 1):
        task = bank.get(task_id)
        ok, found = measure_task(
            env, task, find_spec(task_id), runner, per_task=args.per_task, seed=args.seed
        )
        if not ok:
            failed_references.append(task_id)
        records += found
        for r in found:
            if r.success and r.detectable is not False:
                print(f"  missed: {r.path} {r.operator}: {r.description}", file=sys.stderr)
        print(
            f"[{n}/{len(ids)} {time.perf_counter() - start:.0f}s] {task_id}: {len(found)} mutants, "
            f"{sum(r.success for r in found)} reach success, reference "
            f"{'succeeds' if ok else 'FAILS'}",
            file=sys.stderr,
            flush=True,
        )
    per_task_by_kind = dict.fromkeys(kinds, args.per_task)
    if args.merge is not None and args.merge.exists():
        old = json.loads(args.merge.read_text())
        for kind, n in old.get("per_task_by_kind", {}).items():
            per_task_by_kind.setdefault(kind, n)
        records += [Record(**r) for r in old["records"] if r["kind"] not in kinds]
        failed_references += [t for t in old["failed_references"] if t.split("/")[1] not in kinds]
    rows = table_rows(records)
    print_table(rows, f"Independent mutants of the reference refactorings (seed {args.seed})")
    print(f"references failing: {failed_references or 'none'}")
    if args.list_missed:
        for r in records:
            if r.success:
                flag = "MISSED" if r.detectable is not False else "possibly equivalent"
                print(f"{flag}: {r.task_id} [{r.half}] {r.path} {r.operator}: {r.description}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "seed": args.seed,
                "per_task_by_kind": per_task_by_kind,
                "tasks_per_kind": args.tasks,
                "all_of": sorted(every),
                "rows": rows,
                "failed_references": failed_references,
                "records": [asdict(r) for r in records],
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
