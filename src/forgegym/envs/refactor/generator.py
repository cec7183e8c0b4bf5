"""Seeded generation and offline validation of refactoring tasks.

Pipeline:

1. every kind builds its specs at every level (deterministic, :mod:`.kinds`);
2. the original module's outcomes on each spec's hidden checks are computed *in the
   sandbox* (one job per distinct original and check set; ``run_many``);
3. **mutant kill**: up to ``mutants`` mutants of the original (the Bugfix mutation
   engine, seeded) are loaded side by side in one job per original -- one call per
   mutant -- and a mutant is killed when any hidden check's outcome differs from the
   original's. A spec whose checks kill less than ``min_kill`` is rejected;
4. every remaining spec is graded like ``forgegym tasks verify`` does -- reference,
   no-op and every registered hack as single-turn completions through the batch path --
   and kept only when the reference succeeds with score >= 0.95, the no-op scores
   <= 0.10 and no hack beats the no-op;
5. ``data/manifest.json.gz`` records the kept tasks, the original outcomes, the
   adequacy checks of each original (:mod:`.adequacy`, graded with the kinds' own
   checks) and the validation record (kill rate, scores).

Steps 1-3 are here (Refactor's runtime reuses :func:`origin_outcomes`); step 4 and the
manifest are offline building, :mod:`forgegym.envs.refactor.build.manifest`::

    python -m forgegym.envs.refactor.build.manifest            # writes the manifest
    python -m forgegym.envs.refactor.build.manifest --limit 20 --dry-run
"""

from __future__ import annotations

import random
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.envs.refactor.bank import (
    DIFFICULTY_LEVELS,
)
from forgegym.envs.refactor.checking import BUDGET_HOOK, check_job, outcome_matches
from forgegym.envs.refactor.kinds import kinds as all_kinds
from forgegym.envs.refactor.spec import RefactorSpec
from forgegym.sandbox.jobs import CallJob, CallResult, CallSpec, SetupHook
from forgegym.sandbox.workspace import scratch_root
from forgegym.tasklib.mutations import apply_mutations, enumerate_mutations

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner

__all__ = [
    "RefactorGeneratorConfig",
    "generate_specs",
    "mutant_kill",
    "origin_outcomes",
]

MANIFEST_VERSION = 1


@dataclass(frozen=True)
class RefactorGeneratorConfig:
    """Knobs of the generator (frozen; call :meth:`validate`).

    Attributes:
        seed: drives mutant sampling.
        kinds: kinds to build (``None``: all).
        modules: only specs of these modules (``None``: all), e.g. to revalidate the
            tasks of one changed corpus module and merge them into the manifest.
        levels: difficulty levels to build.
        limit: at most this many specs (``None``: all), for quick runs.
        mutants: mutants sampled per original module.
        min_kill: minimum share of mutants the hidden checks must kill.
        timeout_s: wall limit of each sandbox job.
        threads: tasks validated at once.
        visible_tests: run the visible tests too when validating (off: the hidden checks
            are stronger and the sandbox time halves).
    """

    seed: int = 0
    kinds: tuple[str, ...] | None = None
    modules: tuple[str, ...] | None = None
    levels: tuple[int, ...] = DIFFICULTY_LEVELS
    limit: int | None = None
    mutants: int = 12
    min_kill: float = 0.9
    timeout_s: float = 20.0
    threads: int = 4
    visible_tests: bool = False

    def validate(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        if self.kinds is not None:
            unknown = [k for k in self.kinds if k not in all_kinds()]
            if unknown or not self.kinds:
                raise ValueError(f"kinds: unknown or empty {unknown or self.kinds!r}")
        if not self.levels or any(lv not in DIFFICULTY_LEVELS for lv in self.levels):
            raise ValueError(f"levels must be a non-empty subset of {DIFFICULTY_LEVELS}")
        if self.limit is not None and (isinstance(self.limit, bool) or self.limit < 1):
            raise ValueError(f"limit must be None or >= 1, got {self.limit!r}")
        if isinstance(self.mutants, bool) or not isinstance(self.mutants, int) or self.mutants < 1:
            raise ValueError(f"mutants must be an int >= 1, got {self.mutants!r}")
        if not 0.0 <= self.min_kill <= 1.0:
            raise ValueError(f"min_kill must be in [0, 1], got {self.min_kill!r}")
        if not 0 < self.timeout_s <= 600:
            raise ValueError(f"timeout_s must be in (0, 600], got {self.timeout_s!r}")


def generate_specs(config: RefactorGeneratorConfig) -> list[RefactorSpec]:
    """Every spec the configured kinds build, in a stable order."""
    config.validate()
    specs: list[RefactorSpec] = []
    for kind, builder in all_kinds().items():
        if config.kinds is not None and kind not in config.kinds:
            continue
        for level in config.levels:
            specs.extend(builder(level))
    if config.modules is not None:
        specs = [s for s in specs if s.module in config.modules]
    specs.sort(key=lambda s: s.task_id)
    if config.limit is not None:
        rng = random.Random(config.seed)
        seeds = [s for s in specs if s.variant == "seed"]
        rest = [s for s in specs if s.variant != "seed"]
        rng.shuffle(rest)
        specs = sorted([*seeds, *rest][: config.limit], key=lambda s: s.task_id)
    return specs


def _workdir(files: dict[str, str]) -> Path:
    directory = Path(tempfile.mkdtemp(prefix="fg-refactor-gen-", dir=scratch_root()))
    for path, content in files.items():
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return directory


def _spec_call(
    sequences: list[list[dict[str, Any]]], rename: tuple[str, str] | None = None
) -> CallSpec:
    return check_job(sequences, "/", module_rename=rename).calls[0]


def _matches_all(value: Any, expected: list[list[dict[str, Any]]]) -> bool:
    return (
        isinstance(value, list)
        and len(value) == len(expected)
        and all(
            isinstance(row, list)
            and len(row) == len(want)
            and all(outcome_matches(g, w) for g, w in zip(row, want, strict=True))
            for row, want in zip(value, expected, strict=True)
        )
    )


def origin_outcomes(
    specs: list[RefactorSpec], runner: Runner, timeout_s: float
) -> tuple[dict[str, list[list[dict[str, Any]]]], dict[str, list[list[dict[str, Any]]]]]:
    """The original module's outcomes on each distinct (original, checks) -- hidden
    checks and oracle -- computed in the sandbox, one job per original."""
    unique: dict[str, RefactorSpec] = {}
    for spec in specs:
        unique.setdefault(spec.origin_key, spec)
    keys = sorted(unique)
    dirs = [_workdir(unique[k].original) for k in keys]
    try:
        jobs = [
            CallJob(
                workdir=str(d),
                setup_hooks=[SetupHook(target=BUDGET_HOOK)],
                calls=[
                    _spec_call(unique[k].origin_sequences()),
                    _spec_call(unique[k].oracle or [[]]),
                ],
                timeout_s=timeout_s * 2,
                per_call_timeout_s=timeout_s,
            )
            for k, d in zip(keys, dirs, strict=True)
        ]
        results = runner.run_many(jobs)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    hidden: dict[str, list[list[dict[str, Any]]]] = {}
    oracle: dict[str, list[list[dict[str, Any]]]] = {}
    for key, result in zip(keys, results, strict=True):
        assert isinstance(result, CallResult)
        first, second = result.outcome(0), result.outcome(1)
        if (
            first.ok
            and isinstance(first.value, list)
            and second.ok
            and isinstance(second.value, list)
        ):
            hidden[key] = first.value
            oracle[key] = second.value
    return hidden, oracle


def _mutants(spec: RefactorSpec, n: int, seed: int) -> list[str]:
    ((path, source),) = [(p, s) for p, s in spec.original.items() if p == f"{spec.module}.py"]
    mutations = enumerate_mutations(source)
    rng = random.Random(f"{seed}:{spec.module}:{spec.origin_key}")
    rng.shuffle(mutations)
    out: list[str] = []
    seen = {source}
    for mutation in mutations:
        if len(out) >= n:
            break
        try:
            mutated = apply_mutations(source, [mutation])
            compile(mutated, path, "exec")
        except Exception:  # noqa: BLE001 - a mutation that does not apply is skipped
            continue
        if mutated not in seen:
            seen.add(mutated)
            out.append(mutated)
    return out


def mutant_kill(
    specs: list[RefactorSpec],
    outcomes: tuple[dict[str, Any], dict[str, Any]],
    runner: Runner,
    *,
    mutants: int,
    seed: int,
    timeout_s: float,
) -> dict[str, dict[str, int]]:
    """Per origin key: ``mutants`` sampled, ``detectable`` (told apart from the original
    by the hidden checks or the much larger oracle) and ``killed`` (by the hidden checks).
    One job per original; two calls per mutant (hidden checks, oracle)."""
    hidden, oracle = outcomes
    unique: dict[str, RefactorSpec] = {}
    for spec in specs:
        if spec.origin_key in hidden:
            unique.setdefault(spec.origin_key, spec)
    keys = sorted(unique)
    jobs: list[CallJob] = []
    dirs: list[Path] = []
    counts: list[int] = []
    try:
        for key in keys:
            spec = unique[key]
            sources = _mutants(spec, mutants, seed)
            counts.append(len(sources))
            directory = _workdir(
                {f"_fgmut_{i}.py": s for i, s in enumerate(sources)} or {"_empty.py": ""}
            )
            dirs.append(directory)
            calls: list[CallSpec] = []
            for i in range(len(sources)):
                rename = (spec.module, f"_fgmut_{i}")
                calls.append(_spec_call(spec.origin_sequences(), rename))
                calls.append(_spec_call(spec.oracle or [[]], rename))
            if not calls:
                calls = [_spec_call([[]])]
            jobs.append(
                CallJob(
                    workdir=str(directory),
                    setup_hooks=[SetupHook(target=BUDGET_HOOK)],
                    calls=calls,
                    timeout_s=min(600.0, timeout_s * 6),
                    per_call_timeout_s=3.0,
                )
            )
        results = runner.run_many(jobs)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    kills: dict[str, dict[str, int]] = {}
    for key, result, count in zip(keys, results, counts, strict=True):
        assert isinstance(result, CallResult)
        killed = detectable = 0
        for i in range(count):
            h, o = result.outcome(2 * i), result.outcome(2 * i + 1)
            caught = not (h.ok and _matches_all(h.value, hidden[key]))
            seen = caught or not (o.ok and _matches_all(o.value, oracle[key]))
            killed += caught
            detectable += seen
        kills[key] = {"mutants": count, "detectable": detectable, "killed": killed}
    return kills
