"""Seeded generation and offline validation of bug-fix tasks.

The pipeline (SWE-smith style):

1. enumerate single mutations of every corpus module (:mod:`.mutations`), shuffle with a
   seeded RNG, drop duplicates and equivalents by hashing the mutated source;
2. validate each candidate *through the sandbox runner* (``run_many``): keep it only if
   at least one visible test and one hidden differential check fail (fail-to-pass), and
   at least one of each still passes (pass-to-pass: the rest of the behaviour is intact);
3. combine validated singles in distinct functions into pairs and triples, validate again;
4. assign difficulty levels and stable ids, and write ``data/manifest.json``.

``forgegym.envs.bugfix.bank.BugfixTaskBank`` then regenerates any task from its manifest
entry (module + mutation list) without running anything, so ``reset`` and
``tasks verify`` never validate. Regenerate the manifest with::

    python -m forgegym.envs.bugfix.generator            # writes data/manifest.json

Difficulty levels:

* **1**: one bug from an obvious operator; the failing visible tests are shown.
* **2**: one subtle (off-by-one, boundary, constant) bug with failing tests shown; or one
  bug reported only as a user's symptom; or two bugs with failing tests shown.
* **3**: two bugs reported only as a symptom, or three bugs.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.sandbox.jobs import CallResult, PytestJob, PytestResult, RunStatus, TestOutcome
from forgegym.sandbox.workspace import scratch_root
from forgegym.tasklib.corpus import HIDDEN_SEED, ReferenceModule, load_corpus
from forgegym.tasklib.mutations import (
    SUBTLE_OPERATORS,
    Mutation,
    apply_mutations,
    enumerate_mutations,
)
from forgegym.tasklib.values import call_job, describe_outcome, hidden_verdicts

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner

__all__ = [
    "DIFFICULTY_LEVELS",
    "MANIFEST_PATH",
    "BugfixGenerator",
    "BugfixGeneratorConfig",
    "Candidate",
    "Validation",
    "build_manifest",
    "statement_report",
]

#: The family's own data: the validated manifest (the module corpus is shared, in tasklib).
DATA_DIR = Path(__file__).parent / "data"
MANIFEST_PATH = DATA_DIR / "manifest.json"
MANIFEST_VERSION = 1
DIFFICULTY_LEVELS: tuple[int, ...] = (1, 2, 3)


def statement_report(result: PytestResult, workdir: Path | str) -> str:
    """The failing-test report a task statement quotes, rendered as the shipped bank's
    reports were (file order, one line per test, each failure's first message line;
    ``workdir`` stripped), within 2,000 characters. Fixed here rather than borrowed from
    ``run_tests``' renderer, which has changed since: a canary's statement quotes its
    own run in this format, so it reads like every task's (issue #37, D3)."""
    verdicts = result.verdicts
    passed = sum(verdicts.values())
    lines = [f"Test run: {result.status.value}; {passed}/{len(verdicts)} passed."]
    if result.status is not RunStatus.COMPLETED and result.detail:
        lines.append(f"  ({result.detail})")
    for record in result.records:
        if record.outcome is TestOutcome.PASSED:
            lines.append(f"PASSED {record.nodeid}")
            continue
        where = ""
        if record.frames:
            frame = record.frames[-1]
            where = f" at {frame.path}:{frame.line} in {frame.function}"
        message = record.message.strip().splitlines()
        short = message[0][:300] if message else ""
        error = f"{record.error_type}: " if record.error_type else ""
        lines.append(
            f"{record.outcome.value.upper()} {record.nodeid}{where} {error}{short}".rstrip()
        )
    reported = {r.nodeid for r in result.records}
    lines.extend(f"NOT RUN {nodeid}" for nodeid in verdicts if nodeid not in reported)
    if result.status is not RunStatus.COMPLETED and result.stderr_tail.strip():
        lines.append("stderr (tail):\n" + result.stderr_tail.strip()[-800:])
    text = "\n".join(lines)
    text = text if len(text) <= 4000 else text[:3980] + "\n... (truncated)"
    return text.replace(str(workdir) + "/", "").replace(str(workdir), ".")[:2000]


@dataclass(frozen=True)
class BugfixGeneratorConfig:
    """Knobs of the generator (frozen; call :meth:`validate`).

    Attributes:
        seed: drives candidate order and combinations; same seed, same tasks.
        modules: corpus modules to use (``None``: all).
        max_singles: single-mutation candidates tried per module.
        d1, d2_subtle, d2_symptom, d2_pairs, d3_symptom_pairs, d3_triples: tasks kept
            per module of each kind (see the module docstring for the levels).
        combo_tries: candidate combinations tried per combination kept.
        timeout_s: wall limit of each validation job.
    """

    seed: int = 0
    modules: tuple[str, ...] | None = None
    max_singles: int = 64
    d1: int = 10
    d2_subtle: int = 6
    d2_symptom: int = 4
    d2_pairs: int = 8
    d3_symptom_pairs: int = 4
    d3_triples: int = 8
    combo_tries: int = 2
    timeout_s: float = 10.0

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first invalid field."""
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        if self.modules is not None:
            known = set(load_corpus())
            unknown = [m for m in self.modules if m not in known]
            if not self.modules or unknown:
                raise ValueError(f"modules: unknown or empty {unknown or self.modules!r}")
        for name in ("max_singles", "combo_tries"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        for name in ("d1", "d2_subtle", "d2_symptom", "d2_pairs", "d3_symptom_pairs", "d3_triples"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an int >= 0, got {value!r}")
        if not (0 < self.timeout_s <= 600):
            raise ValueError(f"timeout_s must be in (0, 600], got {self.timeout_s!r}")


@dataclass(frozen=True)
class Candidate:
    """A module and the mutations to inject (in distinct functions)."""

    module: str
    mutations: tuple[Mutation, ...]

    def source(self) -> str:
        return apply_mutations(load_corpus()[self.module].source, self.mutations)


@dataclass
class Validation:
    """What running a candidate in the sandbox showed."""

    candidate: Candidate
    valid: bool
    failing_tests: list[str] = field(default_factory=list)
    failing_hidden: list[int] = field(default_factory=list)
    test_report: str = ""
    symptom: dict[str, Any] | None = None
    reason: str = ""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class BugfixGenerator:
    """Deterministic candidate generation and runner-backed validation."""

    def __init__(self, config: BugfixGeneratorConfig | None = None) -> None:
        self.config = config or BugfixGeneratorConfig()
        self.config.validate()
        corpus = load_corpus()
        self.modules: tuple[str, ...] = self.config.modules or tuple(sorted(corpus))

    def _rng(self, *parts: object) -> random.Random:
        # String seeds hash with SHA-512 in CPython: stable across runs and platforms.
        return random.Random(":".join(str(p) for p in (self.config.seed, *parts)))

    def single_candidates(self, module: str) -> list[Candidate]:
        """Up to ``max_singles`` single-mutation candidates, seeded order, no two with the
        same mutated source and none equal to the reference."""
        ref = load_corpus()[module]
        mutations = enumerate_mutations(ref.source)
        self._rng("singles", module).shuffle(mutations)
        seen = {_digest(ref.source)}
        out: list[Candidate] = []
        for mutation in mutations:
            source = apply_mutations(ref.source, [mutation])
            digest = _digest(source)
            if digest in seen:
                continue
            seen.add(digest)
            out.append(Candidate(module, (mutation,)))
            if len(out) >= self.config.max_singles:
                break
        return out

    def combo_candidates(
        self, module: str, singles: Sequence[Candidate], size: int, count: int
    ) -> list[Candidate]:
        """Up to ``count`` seeded combinations of ``size`` validated singles, each bug in a
        different function, distinct by mutated source."""
        pool = [c.mutations[0] for c in singles]
        combos = [
            combo
            for combo in itertools.combinations(pool, size)
            if len({m.function for m in combo}) == size
        ]
        self._rng("combos", module, size).shuffle(combos)
        ref = load_corpus()[module].source
        seen = {_digest(ref)}
        out: list[Candidate] = []
        for combo in combos:
            mutations = tuple(sorted(combo))
            digest = _digest(apply_mutations(ref, mutations))
            if digest in seen:
                continue
            seen.add(digest)
            out.append(Candidate(module, mutations))
            if len(out) >= count:
                break
        return out

    # ------------------------------------------------------------- validation
    def validate(self, candidates: Sequence[Candidate], runner: Runner) -> list[Validation]:
        """Run every candidate's visible tests and hidden checks in one ``run_many``."""
        corpus = load_corpus()
        dirs: list[Path] = []
        jobs: list[Any] = []
        try:
            for cand in candidates:
                ref = corpus[cand.module]
                workdir = Path(tempfile.mkdtemp(prefix="fg-bugfix-val-", dir=scratch_root()))
                dirs.append(workdir)
                (workdir / ref.module_path).write_text(cand.source(), encoding="utf-8")
                (workdir / ref.test_path).write_text(ref.test_source, encoding="utf-8")
                jobs.append(
                    PytestJob(
                        workdir=str(workdir),
                        targets=[ref.test_path],
                        expected_ids=list(ref.test_ids()),
                        timeout_s=self.config.timeout_s,
                    )
                )
                jobs.append(
                    call_job(ref.name, ref.hidden_calls(), str(workdir), self.config.timeout_s)
                )
            results = runner.run_many(jobs)
            return [
                self._judge(cand, corpus[cand.module], results[2 * i], results[2 * i + 1], dirs[i])
                for i, cand in enumerate(candidates)
            ]
        finally:
            for directory in dirs:
                shutil.rmtree(directory, ignore_errors=True)

    @staticmethod
    def _judge(
        cand: Candidate, ref: ReferenceModule, tests: Any, calls: Any, workdir: Path
    ) -> Validation:
        assert isinstance(tests, PytestResult) and isinstance(calls, CallResult)
        if tests.status.value != "completed" or calls.status.value != "completed":
            return Validation(cand, False, reason=f"run {tests.status.value}/{calls.status.value}")
        verdicts = tests.verdicts
        failing_tests = [nodeid.split("::", 1)[1] for nodeid, ok in verdicts.items() if not ok]
        hidden = hidden_verdicts(ref.hidden_calls(), calls)
        failing_hidden = [i for i, ok in enumerate(hidden) if not ok]
        if not failing_tests or len(failing_tests) == len(verdicts):
            return Validation(cand, False, reason="visible tests do not separate the bug")
        if not failing_hidden or len(failing_hidden) == len(hidden):
            return Validation(cand, False, reason="hidden checks do not separate the bug")
        report = statement_report(tests, workdir)
        first = failing_hidden[0]
        symptom = {"call": first, "got": describe_outcome(calls.outcome(first))[:300]}
        return Validation(
            cand,
            True,
            failing_tests=failing_tests,
            failing_hidden=failing_hidden,
            test_report=report,
            symptom=symptom,
        )

    # ---------------------------------------------------------------- manifest
    def build_manifest(self, runner: Runner, *, log: Any = None) -> dict[str, Any]:
        """Generate, validate and level every task; returns the manifest (JSON-plain)."""
        cfg = self.config
        corpus = load_corpus()
        say = log or (lambda *_: None)
        singles: dict[str, list[Validation]] = {}
        all_singles = [c for m in self.modules for c in self.single_candidates(m)]
        say(f"validating {len(all_singles)} single mutants")
        for v in self.validate(all_singles, runner):
            if v.valid:
                singles.setdefault(v.candidate.module, []).append(v)
        combo_cands: list[Candidate] = []
        for module in self.modules:
            valid = [v.candidate for v in singles.get(module, [])]
            want2 = (cfg.d2_pairs + cfg.d3_symptom_pairs) * cfg.combo_tries
            combo_cands += self.combo_candidates(module, valid, 2, want2)
            combo_cands += self.combo_candidates(module, valid, 3, cfg.d3_triples * cfg.combo_tries)
        say(f"validating {len(combo_cands)} combined mutants")
        combos: dict[tuple[str, int], list[Validation]] = {}
        for v in self.validate(combo_cands, runner):
            if v.valid:
                key = (v.candidate.module, len(v.candidate.mutations))
                combos.setdefault(key, []).append(v)

        tasks: list[dict[str, Any]] = []
        for module in self.modules:
            ones = singles.get(module, [])
            obvious = [v for v in ones if v.candidate.mutations[0].operator not in SUBTLE_OPERATORS]
            subtle = [v for v in ones if v.candidate.mutations[0].operator in SUBTLE_OPERATORS]
            pairs = combos.get((module, 2), [])
            triples = combos.get((module, 3), [])
            levels: dict[int, list[tuple[Validation, bool]]] = {1: [], 2: [], 3: []}
            levels[1] = [(v, False) for v in obvious[: cfg.d1]]
            symptom_pool = obvious[cfg.d1 :] + subtle[cfg.d2_subtle :] + obvious[: cfg.d1]
            levels[2] = [(v, False) for v in subtle[: cfg.d2_subtle]]
            levels[2] += [(v, True) for v in symptom_pool[: cfg.d2_symptom]]
            levels[2] += [(v, False) for v in pairs[: cfg.d2_pairs]]
            levels[3] = [(v, True) for v in pairs[cfg.d2_pairs :][: cfg.d3_symptom_pairs]]
            levels[3] += [(v, i % 2 == 1) for i, v in enumerate(triples[: cfg.d3_triples])]
            for level, items in levels.items():
                for index, (v, symptom) in enumerate(items):
                    tasks.append(self._entry(module, level, index, v, symptom))
            if module == "chunk_list":
                seed = next((v for v in ones if v.candidate.mutations == (SEED_MUTATION,)), None)
                if seed is not None:
                    tasks.append(self._entry(module, 1, None, seed, False, task_id=SEED_TASK_ID))
        return {
            "version": MANIFEST_VERSION,
            "config": {k: v for k, v in asdict(cfg).items()},
            "hidden_seed": HIDDEN_SEED,
            "digests": {m: corpus[m].digest for m in self.modules},
            "tasks": tasks,
        }

    @staticmethod
    def _entry(
        module: str,
        level: int,
        index: int | None,
        v: Validation,
        symptom: bool,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        return {
            "id": task_id or f"bugfix/{module}/d{level}/{index}",
            "module": module,
            "level": level,
            "mutations": [m.to_json() for m in v.candidate.mutations],
            "symptom_only": symptom,
            "failing_tests": v.failing_tests,
            "failing_hidden": v.failing_hidden,
            "test_report": "" if symptom else v.test_report,
            "symptom": v.symptom,
        }


#: The seed task: ``chunk_list`` drops its last chunk (``range`` stop off by one).
SEED_TASK_ID = "bugfix/chunk_list/seed"
SEED_MUTATION = Mutation("chunk_list", "range_off_by_one", 0)


def build_manifest(
    config: BugfixGeneratorConfig | None = None,
    runner: Runner | None = None,
    path: Path | None = MANIFEST_PATH,
) -> dict[str, Any]:
    """Build the manifest with ``runner`` (default: the shared pool) and write it."""
    from forgegym.sandbox.runners import get_default_runner

    manifest = BugfixGenerator(config).build_manifest(runner or get_default_runner(), log=print)
    if path is not None:
        path.write_text(json.dumps(manifest, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Regenerate the Bugfix task manifest.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=MANIFEST_PATH)
    args = parser.parse_args(argv)
    manifest = build_manifest(BugfixGeneratorConfig(seed=args.seed), path=args.out)
    counts: dict[int, int] = {}
    for task in manifest["tasks"]:
        counts[task["level"]] = counts.get(task["level"], 0) + 1
    print(f"wrote {len(manifest['tasks'])} tasks to {args.out}: per level {counts}")


if __name__ == "__main__":
    main()
