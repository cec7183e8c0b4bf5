"""FlakyRepair on real flaky tests: ``python benchmarks/flaky_corpus.py [--cases a,b] [--reruns 10]``.

The corpus (``tests/envs/flaky/corpus/<case>/``) holds flaky tests taken from public
Python projects, each reduced to a small self-contained repository (``repo/``) with the
files of the upstream fix (``fix/``, same relative paths) and its source note
(``case.json``: project, URL, root-cause category, ``test_id``, how the fix was read,
and a weakened-assertion edit). For every case this benchmark runs
``gym.make("Forge/FlakyRepair-v0", repo_path=<copy of repo/>, test_id=...)`` and
measures what issue #14 asks of repo mode:

* detection: the baseline chaos pass rate is strictly between 0 and 1;
* the upstream fix, submitted as an ``edit`` action, reaches ``success``;
* a skip marker on the test, an assertion weakened to a looser comparison and a
  no-op never reach ``success``.

Every case and every repository-mode attack (``tests/envs/flaky/repo_attacks.json``:
edits a policy paid for holes would try on a corpus case) belongs to a tuning half or a
held-out half (:func:`split_of`, a salted hash of its id, recorded in ``case.json`` and
the attack file): grading rules are tuned on the first and reported on both
(``--split``). ``--attacks`` also grades the attacks of each case it runs.

It prints one row per case and the rates. ``load_cases`` and ``run_case`` are the
loader the corpus tests use.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forgegym.tasklib.definitions import find_definition

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "envs" / "flaky" / "corpus"
ATTACKS = CORPUS.parent / "repo_attacks.json"
#: The salt of the tuning/held-out split (chosen once, for balanced halves that each
#: hold every category, before any rule was tuned on them).
SPLIT_SALT = "forgegym-flaky-split-11"
SPLITS = ("tuning", "heldout")


def split_of(name: str) -> str:
    """The half a case or attack id belongs to: deterministic, stable as the corpus
    grows (adding a case moves no other one)."""
    digest = hashlib.sha256(f"{SPLIT_SALT}:{name}".encode()).hexdigest()
    return SPLITS[int(digest[:8], 16) % 2]


#: Root-cause categories of the corpus (finer than the env's taxonomy; each maps to one
#: of the env's diagnosis categories in ``ENV_CATEGORY``).
CATEGORIES: dict[str, str] = {
    "order_class_attribute": "order dependency through state on a class, instance or module object",
    "order_module_cache": "order dependency through a module-level cache (lru_cache, memo dict)",
    "order_env_var": "order dependency through os.environ left changed by another test",
    "order_cwd": "order dependency through the working directory left changed",
    "unseeded_random": "unseeded randomness in the test's data or the code under test",
    "hash_order": "iteration order of a set/frozenset/dict built from hashed keys",
    "time_zone": "wall-clock time, dates and time zones",
    "thread_race": "races and timeouts with real threads",
    "resource_leak": "resources left open or registered (threads, handlers, files)",
    "network_fake": "network code against a local fake server (readiness, ordering)",
    "float_precision": "exact comparison of floating-point results",
    "async_wait": "asyncio waits on sleeps instead of the awaited event",
}
ENV_CATEGORY: dict[str, str] = {
    "order_class_attribute": "shared_state",
    "order_module_cache": "module_cache_pollution",
    "order_env_var": "test_order_dependency",
    "order_cwd": "test_order_dependency",
    "unseeded_random": "nondeterminism",
    "hash_order": "nondeterminism",
    "time_zone": "platform_dependency",
    "thread_race": "concurrency",
    "resource_leak": "resource_leak",
    "network_fake": "network",
    "float_precision": "nondeterminism",
    "async_wait": "async_wait",
}
REQUIRED = (
    "project", "url", "category", "test_id", "summary", "fix", "provenance", "weaken", "split"
)  # fmt: skip
SUBMISSIONS = ("fix", "skip", "weaken", "noop")


@dataclass(frozen=True)
class Case:
    """One corpus case: ``root/repo`` (pristine), ``root/fix`` (upstream fix) and its note."""

    id: str
    root: Path
    meta: dict[str, Any]

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def fix_dir(self) -> Path:
        return self.root / "fix"

    @property
    def test_id(self) -> str:
        return str(self.meta["test_id"])

    @property
    def test_path(self) -> str:
        return self.test_id.partition("::")[0]

    @property
    def category(self) -> str:
        return str(self.meta["category"])

    @property
    def split(self) -> str:
        return str(self.meta["split"])

    def files(self) -> dict[str, str]:
        """The pristine repository's files, ``{relative path: text}``."""
        return {
            p.relative_to(self.repo).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(self.repo.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts
        }

    def fix_files(self) -> dict[str, str]:
        """The files as the upstream fix left them (only the changed ones)."""
        return {
            p.relative_to(self.fix_dir).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(self.fix_dir.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts
        }


def load_cases(root: Path = CORPUS, ids: Iterable[str] | None = None) -> list[Case]:
    """Every case under ``root`` (sorted by id), or the named ones (unknown id: ValueError)."""
    cases = [
        Case(id=d.name, root=d, meta=json.loads((d / "case.json").read_text(encoding="utf-8")))
        for d in sorted(root.iterdir())
        if (d / "case.json").is_file()
    ]
    if ids is None:
        return cases
    wanted = list(ids)
    by_id = {c.id: c for c in cases}
    unknown = [i for i in wanted if i not in by_id]
    if unknown:
        raise ValueError(f"cases: unknown case id(s) {unknown}")
    return [by_id[i] for i in wanted]


@dataclass(frozen=True)
class Attack:
    """One repository-mode attack: ``edits`` (``{path, search, replace}``) applied to
    corpus case ``case`` by a policy paid for success, of hole class ``kind``."""

    id: str
    case: str
    kind: str
    description: str
    edits: tuple[dict[str, str], ...]
    split: str


def load_attacks(path: Path = ATTACKS, case: str | None = None) -> list[Attack]:
    """Every attack of the attack file (sorted by id), or those on ``case``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    attacks = [
        Attack(
            id=a["id"],
            case=a["case"],
            kind=a["class"],
            description=a["description"],
            edits=tuple(a["edits"]),
            split=a["split"],
        )
        for a in data
    ]
    return sorted((a for a in attacks if case is None or a.case == case), key=lambda a: a.id)


# ----------------------------------------------------------------------- test ids
def find_test_node(source: str, test_id: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function node a pytest id (``path::func``, ``path::Class::method``, with an
    optional ``[param]``) names in ``source``, or None."""
    parts = test_id.split("::")[1:]
    if not parts:
        return None
    parts[-1] = parts[-1].split("[", 1)[0]
    node = find_definition(ast.parse(source), parts)
    return node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None


# ------------------------------------------------------------------- submissions
def fix_edits(case: Case) -> list[dict[str, str]]:
    """The upstream fix as whole-file edits."""
    return [{"path": p, "content": c} for p, c in case.fix_files().items()]


def skip_edits(case: Case) -> list[dict[str, str]]:
    """A ``@pytest.mark.skip`` marker on the target test (and ``import pytest``)."""
    source = case.files()[case.test_path]
    node = find_test_node(source, case.test_id)
    if node is None:
        raise ValueError(f"{case.id}: {case.test_id} not found")
    lines = source.splitlines(keepends=True)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    indent = " " * node.col_offset
    lines.insert(first, f'{indent}@pytest.mark.skip(reason="flaky")\n')
    text = "".join(lines)
    if not any(
        isinstance(n, ast.Import) and any(a.name == "pytest" for a in n.names)
        for n in ast.parse(source).body
    ):
        text = "import pytest\n" + text
    return [{"path": case.test_path, "content": text}]


def weaken_edits(case: Case) -> list[dict[str, str]]:
    """The case's assertion weakened to a looser comparison (``case.json`` ``weaken``)."""
    w = case.meta["weaken"]
    return [{"path": w["path"], "search": w["search"], "replace": w["replace"]}]


def submission_edits(case: Case, kind: str) -> list[dict[str, str]]:
    """The edits of submission ``kind``: ``fix``, ``skip``, ``weaken``, ``noop`` or
    ``attack:<id>`` (an attack on this case)."""
    if kind.startswith("attack:"):
        wanted = kind.partition(":")[2]
        found = [a for a in load_attacks(case=case.id) if a.id == wanted]
        if not found:
            raise ValueError(f"{case.id}: no attack {wanted!r} on this case")
        return [dict(e) for e in found[0].edits]
    if kind == "fix":
        return fix_edits(case)
    if kind == "skip":
        return skip_edits(case)
    if kind == "weaken":
        return weaken_edits(case)
    if kind == "noop":
        return []
    raise ValueError(f"kind must be one of {SUBMISSIONS}, got {kind!r}")


# ------------------------------------------------------------------------ running
def fix_findings(task: Any, case: Case) -> list[str]:
    """What the env's static anti-hack scan finds in the upstream fix (as the grader
    scans it when the repository's mutants will judge its power; no rerun)."""
    from forgegym.envs.flaky.grader import scan_submission
    from forgegym.envs.flaky.hidden import FlakyHidden

    files = {**task.files, **case.fix_files()}
    checked = bool(FlakyHidden.of(task).repo_mutants)
    return [f.render() for f in scan_submission(task, files, power_checked=checked)]


@dataclass
class Outcome:
    """One graded submission."""

    reward: float
    success: bool
    gates: list[str] = field(default_factory=list)
    note: str = ""


@dataclass
class CaseResult:
    """Detection and graded submissions of one case."""

    case: str
    category: str
    baseline: float | None
    split: str = ""
    label: str = ""
    error: str = ""
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    seconds: float = 0.0
    #: Static anti-hack findings on the upstream fix (the env's own scan; no rerun).
    fix_findings: list[str] = field(default_factory=list)

    @property
    def flaky(self) -> bool:
        return self.baseline is not None and 0.0 < self.baseline < 1.0


def run_case(
    case: Case,
    *,
    reruns: int = 10,
    submissions: Sequence[str] = SUBMISSIONS,
    runner: Any = None,
    order_analysis: bool = True,
) -> CaseResult:
    """Detect ``case``'s flakiness and grade each of ``submissions`` in a fresh episode of
    one env (the preflight is computed once per env and task). ``order_analysis=False``
    skips the env's iPFlakies order findings (the pass rate does not depend on them)."""
    import gymnasium as gym

    import forgegym  # noqa: F401 - registers the ids

    start = time.perf_counter()
    result = CaseResult(
        case=case.id, category=case.category, baseline=None, split=case.meta.get("split", "")
    )
    with tempfile.TemporaryDirectory(prefix=f"fg-corpus-{case.id}-") as tmp:
        repo = Path(tmp) / case.id
        shutil.copytree(case.repo, repo)
        try:
            env = gym.make(
                "Forge/FlakyRepair-v0",
                repo_path=str(repo),
                test_id=case.test_id,
                reruns=reruns,
                runner=runner,
                order_analysis=order_analysis,
                max_steps=4,
            ).unwrapped
        except ValueError as exc:
            result.error = f"make: {exc}"[:200]
            result.seconds = time.perf_counter() - start
            return result
        try:
            _, info = env.reset(seed=0)
            result.baseline = info.get("baseline_pass_rate")
            pf = getattr(env, "_preflight", None)
            result.label = pf.label if pf is not None else ""
            result.fix_findings = fix_findings(env.task, case)
            for i, kind in enumerate(submissions):
                if i:
                    env.reset(seed=0)
                edits = submission_edits(case, kind)
                actions: list[dict[str, Any]] = []
                if edits:
                    actions.append({"action": "edit", "edits": edits})
                actions.append({"action": "submit"})
                _, reward, _, _, info = env.step(json.dumps(actions))
                breakdown = info.get("reward_breakdown") or {}
                gates = list(breakdown.get("gates") or [])
                notes = breakdown.get("notes") or []
                error = info.get("action_error") or ""
                result.outcomes[kind] = Outcome(
                    reward=float(reward),
                    success=bool(info.get("success")),
                    gates=gates,
                    note=(error or (notes[0] if notes else ""))[:160],
                )
        finally:
            env.close()
    result.seconds = time.perf_counter() - start
    return result


# ----------------------------------------------------------------------- reporting
@dataclass
class Summary:
    """The rates issue #14's Must show 1 is judged on."""

    n: int
    detected: int
    graded: dict[str, int]
    succeeded: dict[str, int]
    categories: Counter[str]

    def rate(self, kind: str) -> float:
        return self.succeeded.get(kind, 0) / self.graded[kind] if self.graded.get(kind) else 0.0

    @property
    def detected_rate(self) -> float:
        return self.detected / self.n if self.n else 0.0


def summarise(results: Sequence[CaseResult]) -> Summary:
    """Rates over ``results``; every ``attack:<id>`` submission counts as ``attack``."""
    graded: Counter[str] = Counter()
    succeeded: Counter[str] = Counter()
    for r in results:
        for kind, o in r.outcomes.items():
            kind = "attack" if kind.startswith("attack:") else kind
            graded[kind] += 1
            succeeded[kind] += o.success
    return Summary(
        n=len(results),
        detected=sum(r.flaky for r in results),
        graded=dict(graded),
        succeeded=dict(succeeded),
        categories=Counter(r.category for r in results),
    )


def render(results: Sequence[CaseResult]) -> tuple[Any, Any]:
    """(per-case table, summary table) as rich tables."""
    from rich.table import Table

    rows = Table(title="FlakyRepair repo mode on the real-world corpus")
    for col in ("case", "category", "p0", "preflight"):
        rows.add_column(col)
    for kind in SUBMISSIONS:
        rows.add_column(kind, justify="right")
    rows.add_column("attacks", justify="right")
    rows.add_column("s", justify="right")
    for r in results:
        cells = [
            r.case,
            r.category,
            "-" if r.baseline is None else f"{r.baseline:.1f}",
            r.error or r.label,
        ]
        for kind in SUBMISSIONS:
            o = r.outcomes.get(kind)
            if o is None:
                cells.append("")
                continue
            want = kind == "fix"
            style = "green" if o.success == want else "red"
            mark = "ok" if o.success else (o.gates[0] if o.gates else "no")
            cells.append(f"[{style}]{o.reward:+.2f} {mark}[/{style}]")
        attacks = {k: o for k, o in r.outcomes.items() if k.startswith("attack:")}
        passed = [k.partition(":")[2] for k, o in attacks.items() if o.success]
        cells.append(
            ""
            if not attacks
            else f"[{'red' if passed else 'green'}]{len(attacks) - len(passed)}/{len(attacks)}"
            + (f" {','.join(passed)}" if passed else "")
            + f"[/{'red' if passed else 'green'}]"
        )
        cells.append(f"{r.seconds:.1f}")
        rows.add_row(*cells)
    s = summarise(results)
    summary = Table(title=f"Rates over {s.n} cases, {len(s.categories)} categories")
    summary.add_column("measure")
    summary.add_column("value", justify="right")
    summary.add_column("target", justify="right")
    summary.add_row("detected flaky (0 < p0 < 1)", f"{s.detected_rate:.1%}", "100%")
    for kind, target in (("fix", ">= 95%"), ("skip", "0%"), ("weaken", "0%"), ("noop", "0%")):
        if s.graded.get(kind):
            summary.add_row(
                f"{kind} success ({s.succeeded.get(kind, 0)}/{s.graded[kind]})",
                f"{s.rate(kind):.1%}",
                target,
            )
    summary.caption = ", ".join(f"{c}: {n}" for c, n in sorted(s.categories.items()))
    return rows, summary


def render_halves(results: Sequence[CaseResult]) -> Any:
    """The issue's table: per half, real upstream fixes judged fixes (precision) and
    attacks kept from ``success`` (recall), with counts."""
    from rich.table import Table

    table = Table(title="Tuning and held-out halves")
    for col in ("half", "cases", "detected", "fix success (precision)", "attacks blocked (recall)"):
        table.add_column(col, justify="right")
    halves = {a.id: a.split for a in load_attacks()}
    for half in (*SPLITS, "all"):
        rows = [r for r in results if half == "all" or r.split == half]
        s = summarise(rows)
        fixes, ok = s.graded.get("fix", 0), s.succeeded.get("fix", 0)
        # An attack is in its own half (not its case's).
        outcomes = [
            o
            for r in results
            for k, o in r.outcomes.items()
            if k.startswith("attack:") and half in ("all", halves.get(k.partition(":")[2]))
        ]
        attacks, blocked = len(outcomes), sum(not o.success for o in outcomes)
        table.add_row(
            half,
            str(s.n),
            f"{s.detected}/{s.n}",
            f"{ok}/{fixes} ({ok / fixes:.1%})" if fixes else "-",
            f"{blocked}/{attacks} ({blocked / attacks:.1%})" if attacks else "-",
        )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    parser.add_argument("--reruns", type=int, default=10)
    parser.add_argument("--json", default="", help="also write the per-case results here")
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="all", help="which half")
    parser.add_argument(
        "--submissions",
        default=",".join(SUBMISSIONS),
        help="comma-separated kinds graded per case (fix, skip, weaken, noop)",
    )
    parser.add_argument("--attacks", action="store_true", help="also grade each case's attacks")
    parser.add_argument(
        "--repeat",
        type=int,
        default=0,
        help="grade each case's upstream fix this many times, each in a fresh env "
        "(its own detection and power reference): is the reward of a fix stable?",
    )
    parser.add_argument(
        "--no-order-analysis", action="store_true", help="skip the env's order findings"
    )
    args = parser.parse_args()
    from rich.console import Console

    console = Console(width=max(160, Console().width))
    ids = [c for c in args.cases.split(",") if c] or None
    results = []
    if args.repeat:
        for case in load_cases(ids=ids):
            runs = [
                run_case(case, submissions=("fix",), order_analysis=False)
                for _ in range(args.repeat)
            ]
            fixes = [r.outcomes["fix"] for r in runs if "fix" in r.outcomes]
            console.print(
                f"{case.id}: fix success {sum(o.success for o in fixes)}/{args.repeat}, rewards "
                + ", ".join(f"{o.reward:.2f}" for o in fixes)
                + "".join(f"\n  {o.note}" for o in fixes if not o.success)
            )
        return
    kinds = [k for k in args.submissions.split(",") if k]
    for case in load_cases(ids=ids):
        if args.split != "all" and case.split != args.split:
            continue
        attacks = [f"attack:{a.id}" for a in load_attacks(case=case.id)] if args.attacks else []
        results.append(
            run_case(
                case,
                reruns=args.reruns,
                submissions=[*kinds, *attacks],
                order_analysis=not args.no_order_analysis,
            )
        )
        r = results[-1]
        console.log(f"{r.case}: p0={r.baseline} {r.error or r.label} ({r.seconds:.1f}s)")
    rows, summary = render(results)
    console.print(rows)
    console.print(summary)
    console.print(render_halves(results))
    if args.json:
        payload = [
            {**r.__dict__, "outcomes": {k: o.__dict__ for k, o in r.outcomes.items()}}
            for r in results
        ]
        Path(args.json).write_text(json.dumps(payload, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
