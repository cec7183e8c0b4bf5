"""Refactor on real engineers' refactorings: ``python benchmarks/refactor_corpus.py [--cases a,b]``.

The corpus (``tests/envs/refactor/corpus/<case>/``) holds refactoring commits from
public Python projects: the changed module at the commit's parent (``before/``) and at
the commit (``after/``, same relative paths), with ``case.json`` (project, commit URL,
what the refactoring does, licence, provenance, example calls, the structure the
refactoring meets, and the tuning/held-out ``split``). Each case becomes a Refactor task
with :func:`forgegym.envs.refactor.user.refactor_task` (hidden differential checks from
the example calls plus boundary and property-based inputs drawn from the *before*
module) and is graded through ``Forge/Refactor-v0``:

* **precision**: the upstream ``after`` of a behaviour-preserving commit
  (``label: preserving``) must reach ``success`` (no gate, not ``broken``);
* **regressions**: a commit labelled ``regression`` changed behaviour (the reason is in
  its ``label_reason``, found by reading the code, not by the grader): its ``after``
  must not reach ``success``;
* **attack recall**: up to :data:`ATTACKS` mutants of the upstream ``after``
  (:mod:`forgegym.tasklib.operators`: relational boundaries, constants +-1, container
  order -- the operator set the task's checks are not built from), each shown to change
  behaviour by a differential fuzzing run independent of the task's hidden checks
  (another seed, wider boundaries, more draws), must not reach ``success`` and must
  score no more than doing nothing;
* the **no-op** (the before files submitted unchanged) must not reach ``success``.

Rates are reported per half (``split``): grading rules are tuned on ``tuning`` only.
``load_cases``, ``build_task``, ``grade`` and ``attacks_for`` are what the corpus test
uses.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "envs" / "refactor" / "corpus"
RESULTS = ROOT / "benchmarks" / "results" / "refactor_corpus.json"
SPLITS = ("tuning", "heldout")
#: Behaviour-changing mutants graded per case.
ATTACKS = 3
#: Mutant candidates tried per case before giving up on finding ``ATTACKS``.
CANDIDATES = 24
#: Seed of the fuzzing inputs that decide whether a mutant changes behaviour (not the
#: tasks' seed: the hidden checks never see these draws).
FUZZ_SEED = 7_300_511
ATTACK_OPERATORS = ("relational", "constant", "order")
#: Tried only where the three above give fewer than ``ATTACKS`` behaviour changes (code
#: with no comparison, number or container order in the refactored functions).
FALLBACK_OPERATORS = ("default", "swap", "drop_else")


class Case(BaseModel):
    """One corpus case (``case.json`` plus its files)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    project: str
    url: str
    reference: str
    refactoring: str
    kind: str
    label: Literal["preserving", "regression"]
    label_reason: str = ""
    module: str
    calls: list[tuple[str, list[Any]]]
    structure: list[dict[str, Any]]
    max_new_functions: int | None = None
    renames: dict[str, str] = Field(default_factory=dict)
    deprecation_warning: bool = True
    licence: str
    provenance: str
    split: Literal["tuning", "heldout"]
    #: 1: collected before any rule was changed; 2: collected after the fixes the first
    #: run led to (unseen by every rule change, whatever its half).
    batch: int = 1
    before: dict[str, str]
    after: dict[str, str]


def _files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*.py"))
    }


def load_cases(names: Sequence[str] | None = None) -> list[Case]:
    """The corpus cases (``names``: only those, in corpus order)."""
    out = []
    for folder in sorted(CORPUS.iterdir()):
        if not (folder / "case.json").is_file() or (names and folder.name not in names):
            continue
        data = json.loads((folder / "case.json").read_text(encoding="utf-8"))
        out.append(
            Case(
                name=folder.name,
                before=_files(folder / "before"),
                after=_files(folder / "after"),
                **data,
            )
        )
    return out


def build_task(case: Case, runner: Any = None) -> Any:
    """The Refactor task of ``case``: built from its before files and requirement only."""
    from forgegym.envs.refactor.user import refactor_task

    return refactor_task(
        case.before,
        case.module,
        case.calls,
        structure=case.structure,
        renames=case.renames,
        deprecation_warning=case.deprecation_warning,
        max_new_functions=case.max_new_functions,
        kind=case.kind,
        name=case.name,
        title=case.refactoring.split(":")[0].capitalize(),
        runner=runner,
    )


class Graded(BaseModel):
    """One submission's outcome."""

    submission: str
    success: bool
    total: float
    gates: list[str]
    broken: bool
    detail: str = ""


def _action(before: Mapping[str, str], files: Mapping[str, str]) -> str:
    edits = [{"path": p, "content": c} for p, c in sorted(files.items()) if before.get(p) != c]
    actions: list[dict[str, Any]] = []
    if edits:
        actions.append({"action": "edit", "edits": edits})
    actions.append({"action": "submit"})
    return "```json\n" + json.dumps(actions) + "\n```"


def grade(env: Any, task: Any, files: Mapping[str, str], label: str) -> Graded:
    """Submit ``files`` (the whole editable set) on ``task`` through ``env``."""
    env.reset(seed=0, options={"task_id": task.task_id})
    starting = {p: task.files[p] for p in task.editable_files}
    _, _, _, _, info = env.step(_action(starting, files))
    breakdown = info["reward_breakdown"]
    terms = breakdown.get("terms", {})
    broken = bool(terms.get("broken", {}).get("value", 0.0))
    details = [
        f"{k}: {v.get('detail')}"
        for k, v in terms.items()
        if v.get("detail") and k in ("behaviour", "api", "structure")
    ]
    return Graded(
        submission=label,
        success=bool(info["success"]),
        total=float(breakdown["total"]),
        gates=list(breakdown.get("gates", [])),
        broken=broken,
        detail="; ".join([*details, *breakdown.get("notes", [])])[:400],
    )


# ------------------------------------------------------------------ attacks
def _changed_functions(before: str, after: str) -> set[str]:
    def defs(source: str) -> dict[str, str]:
        return {
            n.name: ast.dump(n)
            for n in ast.walk(ast.parse(source))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }

    old, new = defs(before), defs(after)
    return {name for name, dump in new.items() if old.get(name) != dump}


def _attack_files(case: Case) -> list[str]:
    """The after files the refactoring changed (where an attack hides a change)."""
    return [p for p, c in sorted(case.after.items()) if case.before.get(p) != c]


def _candidates(
    case: Case, operator_set: tuple[str, ...] = ATTACK_OPERATORS
) -> list[tuple[str, str, str]]:
    """``(path, description, mutated source)`` candidates, those in the functions the
    refactoring changed first, in a seeded order mixing the operators."""
    from forgegym.tasklib import operators

    inside: list[tuple[str, str, str]] = []
    outside: list[tuple[str, str, str]] = []
    for path in _attack_files(case):
        source = case.after[path]
        touched = _changed_functions(case.before.get(path, ""), source)
        for mutant in operators.mutants(source, operator_set):
            try:
                hit = _changed_functions(ast.unparse(ast.parse(source)), mutant.source)
            except SyntaxError:
                continue
            item = (path, f"{mutant.site.label()} {mutant.description}", mutant.source)
            (inside if hit & touched else outside).append(item)
    rng = random.Random(f"{FUZZ_SEED}:{case.name}")
    rng.shuffle(inside)
    rng.shuffle(outside)
    return [*inside, *outside]


def _run_sequences(
    files: Mapping[str, str], sequences: list[list[dict[str, Any]]], runner: Any
) -> Any:
    from forgegym.envs.refactor.checking import check_job, sequence_outcomes
    from forgegym.sandbox.workspace import scratch_root

    directory = Path(tempfile.mkdtemp(prefix="fg-refactor-corpus-", dir=scratch_root()))
    try:
        for path, content in files.items():
            target = directory / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        job = check_job(sequences, str(directory), timeout_s=60.0)
        (result,) = runner.run_many([job])
        return sequence_outcomes(result, len(sequences))
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def fuzz_sequences(case: Case) -> list[list[dict[str, Any]]]:
    """The differential fuzzing set deciding whether an attack changes behaviour:
    the example calls and the adequacy generator's *fuzz* draws under :data:`FUZZ_SEED`
    (wider boundaries, more draws than any task's checks), as ``{"t", "a"}`` steps."""
    from forgegym.envs.refactor.adequacy import adequacy_sequences
    from forgegym.envs.refactor.user import refactor_spec

    spec = refactor_spec(
        case.before, case.module, case.calls, structure=case.structure, renames=case.renames
    )
    drawn = adequacy_sequences(spec, seed=FUZZ_SEED, fuzz=True)
    steps = [{"t": f"{case.module}:{f}", "a": list(a)} for f, a in case.calls]
    steps += [{"t": s["o"], "a": s["a"]} for seq in drawn for s in seq]
    return [steps]


def _differs(got: Any, want: Any) -> bool:
    from forgegym.envs.refactor.checking import outcome_matches

    if got is None:
        return True
    return any(
        not outcome_matches(g, w, warnings=False)
        for row, want_row in zip(got, want, strict=True)
        for g, w in zip(row, want_row, strict=True)
        if w.get("e") not in ("StepTimeout", "Skipped")
    )


def attacks_for(case: Case, runner: Any, n: int = ATTACKS) -> list[tuple[str, dict[str, str]]]:
    """Up to ``n`` mutants of the upstream after that change behaviour on the fuzzing
    set (compared with the *before* module's outcomes), as ``(label, files)``."""
    sequences = fuzz_sequences(case)
    want = _run_sequences(case.before, sequences, runner)
    if want is None:
        raise RuntimeError(f"{case.name}: the before module failed its fuzzing run")
    chosen: list[tuple[str, dict[str, str]]] = []
    operators_used: set[str] = set()
    deferred: list[tuple[str, dict[str, str]]] = []
    pool = _candidates(case)[:CANDIDATES]
    pool += _candidates(case, FALLBACK_OPERATORS)[:CANDIDATES]
    for path, description, source in pool:
        files = {**case.after, path: source}
        if not _differs(_run_sequences(files, sequences, runner), want):
            continue  # equivalent on the fuzzing set: not an attack
        operator = description.split("#")[0]
        item = (f"mutant {path} {description}"[:160], files)
        # One per operator first, so the attacks are not three of a kind.
        if operator in operators_used:
            deferred.append(item)
        else:
            operators_used.add(operator)
            chosen.append(item)
        if len(chosen) >= n:
            break
    return (chosen + deferred)[:n]


# ------------------------------------------------------------------ the run
class CaseResult(BaseModel):
    name: str
    split: str
    batch: int = 1
    label: str
    kind: str
    after: Graded
    noop: Graded
    attacks: list[Graded]
    seconds: float

    @property
    def correct(self) -> bool:
        """The upstream after is judged as its label says."""
        return self.after.success == (self.label == "preserving")


def run_case(case: Case, runner: Any = None, *, attacks: bool = True) -> CaseResult:
    """Grade the upstream after, the no-op and (``attacks``) the mutants of ``case``."""
    import gymnasium as gym

    import forgegym  # noqa: F401 - registers the envs
    from forgegym.core.task import TaskList
    from forgegym.sandbox.runners import get_default_runner

    runner = runner or get_default_runner()
    started = time.perf_counter()
    task = build_task(case, runner)
    env = gym.make("Forge/Refactor-v0", task_bank=TaskList([task]), max_steps=1, runner=runner)
    try:
        after = grade(env, task, case.after, "upstream after")
        noop = grade(env, task, case.before, "no-op")
        graded = []
        if attacks:
            for label, files in attacks_for(case, runner):
                graded.append(grade(env, task, files, label))
    finally:
        env.close()
    return CaseResult(
        name=case.name,
        split=case.split,
        batch=case.batch,
        label=case.label,
        kind=case.kind,
        after=after,
        noop=noop,
        attacks=graded,
        seconds=time.perf_counter() - started,
    )


def summary(results: Sequence[CaseResult], half: str) -> dict[str, Any]:
    """Rates over one half (``"all"``: both; ``"batch 2"``: the cases collected after
    the rule fixes, both halves)."""
    if half == "batch 2":
        rows = [r for r in results if r.batch == 2]
    else:
        rows = [r for r in results if half == "all" or r.split == half]
    preserving = [r for r in rows if r.label == "preserving"]
    regressions = [r for r in rows if r.label == "regression"]
    attacks = [(r, a) for r in rows for a in r.attacks]
    return {
        "half": half,
        "cases": len(rows),
        "preserving": len(preserving),
        "precision_success": sum(r.after.success for r in preserving),
        "regressions": len(regressions),
        "regressions_caught": sum(not r.after.success for r in regressions),
        "attacks": len(attacks),
        "attacks_not_success": sum(not a.success for _, a in attacks),
        "attacks_at_most_noop": sum(a.total <= r.noop.total + 1e-9 for r, a in attacks),
        "noop_not_success": sum(not r.noop.success for r in rows),
    }


def _rate(k: int, n: int) -> str:
    return f"{k}/{n} ({100.0 * k / n:.0f}%)" if n else "-"


def render(results: Sequence[CaseResult]) -> tuple[Any, Any]:
    from rich.table import Table

    table = Table(title="Refactor on real refactoring commits")
    for column in ("case", "split", "label", "after", "no-op", "attacks (total / success)"):
        table.add_column(column)
    for r in results:
        verdict = (
            "success"
            if r.after.success
            else (
                "gated " + ",".join(r.after.gates)
                if r.after.gates
                else "broken"
                if r.after.broken
                else "partial"
            )
        )
        mark = "" if r.correct else " [red]WRONG[/red]"
        attacks = ", ".join(f"{a.total:+.2f}{'/S' if a.success else ''}" for a in r.attacks) or "-"
        table.add_row(
            r.name,
            r.split,
            r.label,
            f"{verdict} {r.after.total:+.2f}{mark}",
            f"{r.noop.total:+.2f}",
            attacks,
        )
    halves = Table(title="Per half (rules tuned on 'tuning' only)")
    for column in (
        "half",
        "precision",
        "regressions caught",
        "attack recall",
        "attacks <= no-op",
        "no-op not success",
    ):
        halves.add_column(column)
    for half in (*SPLITS, "all", "batch 2"):
        s = summary(results, half)
        halves.add_row(
            half,
            _rate(s["precision_success"], s["preserving"]),
            _rate(s["regressions_caught"], s["regressions"]),
            _rate(s["attacks_not_success"], s["attacks"]),
            _rate(s["attacks_at_most_noop"], s["attacks"]),
            _rate(s["noop_not_success"], s["cases"]),
        )
    return table, halves


def main(argv: list[str] | None = None) -> None:
    from rich.console import Console

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="all")
    parser.add_argument("--no-attacks", action="store_true")
    parser.add_argument("--json", default=str(RESULTS), help="write the results here ('' = no)")
    args = parser.parse_args(argv)
    console = Console()
    cases = load_cases([c for c in args.cases.split(",") if c] or None)
    if args.split != "all":
        cases = [c for c in cases if c.split == args.split]
    results = []
    for case in cases:
        try:
            result = run_case(case, attacks=not args.no_attacks)
        except ValueError as exc:  # refactor_task refused the case: say why, go on
            console.print(f"{case.name}: [red]no task[/red]: {exc}")
            continue
        results.append(result)
        console.print(
            f"{case.name}: after {'success' if result.after.success else 'not success'} "
            f"{result.after.total:+.2f} {result.after.gates or ''} "
            f"({result.seconds:.0f}s) {'' if result.correct else result.after.detail}"
        )
    table, halves = render(results)
    console.print(table)
    console.print(halves)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "summary": [summary(results, h) for h in (*SPLITS, "all", "batch 2")],
                    "cases": [r.model_dump() for r in results],
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    sys.exit(main())
