"""Hidden checks with an adequacy the kinds did not choose, and its measurement.

Every kind writes its own hidden calls (a corpus module's case list and variations, a
template's input generator). On top of those, each task gets *adequacy checks*,
derived by :mod:`forgegym.tasklib.inputs` from the original module's code and the
calls its checks already make:

* boundary calls: each constant the code compares with, slices or bounds a ``range``
  with, at ``c - 1``, ``c`` and ``c + 1`` on the argument it is compared with;
* property calls: hypothesis-drawn arguments from the observed argument types;
* for stateful tasks, call sequences of varied length up to :data:`SEQUENCE_LENGTHS`'s
  last (the kinds' own sequences stop at 9);
* for the kinds of :data:`STRUCTURED_KINDS` (issue #37: a correct refactor with one
  subtle change in them still reached success): *aggregate boundaries* for stateless
  functions taking a list of numbers (lists whose sum, and whose every element, sits at
  ``c - 1``, ``c`` and ``c + 1`` for each number ``c`` the code spells, constant
  expressions such as ``57 // 2`` folded: a threshold on a total the code computes is
  hit, not only one on an argument) and *output boundaries* (a seeded pool of such
  lists run once on the original in the sandbox, keeping those whose output holds a
  number at ``c - 1``, ``c`` or ``c + 1``: a total the code derives after cleaning and
  scaling lands on its threshold), and *block sequences* for stateful ones (each
  ordered pair and triple of functions called in runs of three with distinct
  arguments, so that a stack read as a queue, or the other end popped, shows after two
  pushes and two pops).

They are differential like the rest: drawn once offline (seed recorded), the original
module's outcomes computed in the sandbox (twice: a step whose outcome differs between
the runs is dropped, as are steps the original cannot answer in time) and stored in the
manifest's ``adequacy`` section, keyed like its outcomes by the spec's origin key.
:func:`merged_checks` appends them to the task's checks, mapped onto every refactored
target the task's own steps use for that original function (new names, aliases with
their warnings, consumer modules).

:func:`measure` reports the adequacy with :mod:`forgegym.tasklib.operators`, an
operator set the generators do not use: a mutant is *equivalent* when a much larger
fuzzing set (wider boundaries, more hypothesis draws under another seed, longer
sequences, the kind's oracle) cannot tell it from the original; the kill rate is the
share of the others that the hidden checks (before / with the adequacy checks) catch.

Build or refresh the manifest's section with::

    python -m forgegym.envs.refactor.adequacy            # every origin in the manifest
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.envs.refactor.adequacy_checks import merged_checks
from forgegym.envs.refactor.adequacy_inputs import (
    aggregate_boundary_calls,
    aggregate_pool,
    block_sequences,
    default_arity_calls,
    dense_calls,
    select_by_output,
)
from forgegym.envs.refactor.checking import BUDGET_HOOK, check_job, outcome_matches
from forgegym.envs.refactor.spec import RefactorSpec
from forgegym.sandbox.jobs import CallJob, CallResult, CallSpec, SetupHook
from forgegym.sandbox.workspace import scratch_root
from forgegym.tasklib import inputs, operators

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner

__all__ = [
    "ADEQUACY_SEED",
    "STRUCTURED_KINDS",
    "aggregate_boundary_calls",
    "aggregate_pool",
    "select_by_output",
    "block_sequences",
    "default_arity_calls",
    "MutantRecord",
    "adequacy_entries",
    "adequacy_sequences",
    "measure",
    "merged_checks",
]

#: Seed of the adequacy inputs (recorded in each manifest entry).
ADEQUACY_SEED = 20261202
#: Lengths of the stateful sequences (two per length: one with the observed call mix,
#: one where a single function dominates, so state grows before it is queried).
SEQUENCE_LENGTHS = (4, 10, 16, 24, 32, 48, 64)
#: Kinds whose adequacy inputs include the structured ones (aggregate boundaries, block
#: sequences); the other kinds' manifest entries were drawn without them.
STRUCTURED_KINDS = frozenset({"reduce_complexity", "state_to_object"})
#: Outcomes that say nothing about a candidate (the original ran out of time).
_BAD = frozenset({"StepTimeout", "Skipped"})
_VERSION = 1


def _source(spec: RefactorSpec) -> str:
    """The code the boundary constants come from: the module's file, or for a package
    (a user's task, :mod:`.user`) every original file (its functions live in them)."""
    single = spec.original.get(f"{spec.module}.py")
    if single is not None:
        return single
    return "\n\n".join(text for _, text in sorted(spec.original.items()))


def observed_calls(spec: RefactorSpec) -> list[inputs.Call]:
    """The calls the spec's own checks make on its original module: ``(function,
    args)`` (its oracle included: it is the kind's own input generator too)."""
    out: list[inputs.Call] = []
    for seq in spec.checks:
        for s in seq:
            module, _, qual = str(s["o"]).partition(":")
            if module == spec.module:
                out.append((qual, list(s["a"])))
    return out


def adequacy_sequences(spec: RefactorSpec, *, seed: int, fuzz: bool = False) -> list[list[Any]]:
    """The adequacy calls of ``spec`` as sequences of ``{"o": target, "a": args}``
    steps: one sequence of independent calls for stateless checks, else sequences of
    varied length. ``fuzz``: the much larger set :func:`measure` uses to call a mutant
    equivalent (other seed, wider boundaries, more draws, longer sequences)."""
    source = _source(spec)
    observed = observed_calls(spec)
    boundary = inputs.boundary_calls(
        source,
        observed,
        offsets=(-2, -1, 0, 1, 2) if fuzz else (-1, 0, 1),
        per_function=160 if fuzz else 90,
        bases=4 if fuzz else 2,
        seed=seed,
    )
    drawn = inputs.property_calls(
        source,
        observed,
        seed=seed + 1 if fuzz else seed,
        per_function=40 if fuzz else 30,
        # A bound, not the limiter: the draws stop at per_function first on a quiet
        # machine (the drawn inputs are recorded, so a loaded one changes nothing later).
        time_budget_s=20.0,
    )

    def target(call: inputs.Call) -> dict[str, Any]:
        return {"o": f"{spec.module}:{call[0]}", "a": call[1]}

    structured = spec.kind in STRUCTURED_KINDS
    # Calls leaning on a parameter's default (the kinds always pass every argument).
    defaulted = default_arity_calls(source, [*observed, *boundary]) if structured else []
    if spec.stateless:
        extra = (
            [
                *aggregate_boundary_calls(source, observed, fuzz=fuzz),
                *dense_calls(observed, seed=f"{seed}:{spec.origin_key}:{fuzz}"),
            ]
            if structured
            else []
        )
        return [[target(c) for c in [*boundary, *drawn, *extra, *defaulted]]]
    lengths = (*SEQUENCE_LENGTHS, 96, 128) if fuzz else SEQUENCE_LENGTHS
    sequences = inputs.operation_sequences(
        [*observed, *boundary, *drawn, *defaulted],
        seed=f"{seed}:{spec.origin_key}:{fuzz}",
        lengths=lengths,
        per_length=4 if fuzz else 2,
    )
    if structured:
        sequences += block_sequences(
            [*observed, *defaulted], seed=f"{seed}:{spec.origin_key}:{fuzz}"
        )
    return [[target(c) for c in seq] for seq in sequences]


def _workdir(files: Mapping[str, str]) -> Path:
    directory = Path(tempfile.mkdtemp(prefix="fg-refactor-adequacy-", dir=scratch_root()))
    for path, content in files.items():
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return directory


def _as_steps(sequences: Sequence[Sequence[Mapping[str, Any]]]) -> list[list[dict[str, Any]]]:
    return [[{"t": s["o"], "a": s["a"]} for s in seq] for seq in sequences]


def _call(
    sequences: Sequence[Sequence[Mapping[str, Any]]], rename: tuple[str, str] | None = None
) -> CallSpec:
    return check_job(_as_steps(sequences), "/", target_key="t", module_rename=rename).calls[0]


def _job(directory: Path, calls: list[CallSpec], timeout_s: float) -> CallJob:
    return CallJob(
        workdir=str(directory),
        setup_hooks=[SetupHook(target=BUDGET_HOOK)],
        calls=calls or [_call([[]])],
        timeout_s=min(600.0, timeout_s * max(1, len(calls))),
        per_call_timeout_s=timeout_s,
        output_limit_bytes=64_000_000,
    )


def _values(result: CallResult, index: int, n: int) -> list[list[dict[str, Any]]] | None:
    outcome = result.outcome(index)
    if outcome.ok and isinstance(outcome.value, list) and len(outcome.value) == n:
        return outcome.value
    return None


def _stable(
    sequences: list[list[dict[str, Any]]],
    first: list[list[dict[str, Any]]],
    second: list[list[dict[str, Any]]],
    stateless: bool,
) -> tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]]:
    """The steps (stateless) or sequences (stateful) the original answered in time and
    alike in both runs, with its outcomes."""
    kept_seqs: list[list[dict[str, Any]]] = []
    kept_outs: list[list[dict[str, Any]]] = []
    for seq, a, b in zip(sequences, first, second, strict=True):
        good = [o.get("e") not in _BAD and outcome_matches(o, p) for o, p in zip(a, b, strict=True)]
        if stateless:
            pairs = [(s, o) for s, o, g in zip(seq, a, good, strict=True) if g]
            if pairs:
                kept_seqs.append([s for s, _ in pairs])
                kept_outs.append([o for _, o in pairs])
        elif all(good) and seq:
            kept_seqs.append(seq)
            kept_outs.append(a)
    return kept_seqs, kept_outs


def _draw_for(task_id: str, seed: int, fuzz: bool) -> list[list[Any]]:
    """:func:`adequacy_sequences` of a task by id (what a drawing process runs)."""
    from forgegym.envs.refactor.bank import find_spec

    return adequacy_sequences(find_spec(task_id), seed=seed, fuzz=fuzz)


def draw_all(
    specs: Mapping[str, RefactorSpec],
    *,
    seed: int,
    fuzz: bool = False,
    processes: int = 1,
    log: Callable[[str], Any] = lambda _: None,
) -> dict[str, list[list[Any]]]:
    """:func:`adequacy_sequences` of each spec (by its task id), in ``processes``
    processes (the draws are deterministic per spec: the result does not depend on
    how they are spread)."""
    ids = sorted(specs)
    if processes <= 1:
        out: dict[str, list[list[Any]]] = {}
        for index, task_id in enumerate(ids):
            out[task_id] = adequacy_sequences(specs[task_id], seed=seed, fuzz=fuzz)
            if (index + 1) % 20 == 0:
                log(f"drew adequacy inputs for {index + 1}/{len(ids)} originals")
        return out
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=processes) as pool:
        drawn = pool.map(_draw_for, ids, [seed] * len(ids), [fuzz] * len(ids))
        return dict(zip(ids, drawn, strict=True))


def adequacy_entries(
    specs: Sequence[RefactorSpec],
    runner: Runner,
    *,
    seed: int = ADEQUACY_SEED,
    timeout_s: float = 30.0,
    processes: int = 1,
    drawn: Mapping[str, list[list[Any]]] | None = None,
    log: Callable[[str], Any] = lambda _: None,
) -> dict[str, dict[str, Any]]:
    """Per distinct origin key: the adequacy sequences (``drawn``'s, by origin key, when
    given: e.g. the manifest's, to recompute the outcomes) and the original's outcomes
    on them (two sandbox runs; unstable or unanswered steps dropped)."""
    unique: dict[str, RefactorSpec] = {}
    for spec in specs:
        unique.setdefault(spec.origin_key, spec)
    if drawn is None:
        by_id = {unique[k].task_id: k for k in sorted(unique)}
        drawn_ids = draw_all(
            {t: unique[k] for t, k in by_id.items()}, seed=seed, processes=processes, log=log
        )
        drawn = {by_id[t]: seqs for t, seqs in drawn_ids.items()}
    # The manifest stores JSON with sorted keys: the original must run on exactly the
    # arguments stored (a dict's key order is behaviour).
    drawn = {k: _canonical(v) for k, v in drawn.items() if k in unique}
    drawn = _with_output_boundaries(unique, drawn, runner, timeout_s, log)
    keys = sorted(drawn)
    dirs = [_workdir(unique[k].original) for k in keys]
    try:
        jobs = [
            _job(d, [_call(drawn[k]), _call(drawn[k])], timeout_s)
            for k, d in zip(keys, dirs, strict=True)
        ]
        results = runner.run_many(jobs)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    out: dict[str, dict[str, Any]] = {}
    for key, result in zip(keys, results, strict=True):
        assert isinstance(result, CallResult)
        n = len(drawn[key])
        first, second = _values(result, 0, n), _values(result, 1, n)
        if first is None or second is None:
            log(f"original {key} ({unique[key].module}) failed its adequacy run: {result.detail}")
            continue
        seqs, outs = _stable(drawn[key], first, second, unique[key].stateless)
        out[key] = {
            "version": _VERSION,
            "seed": seed,
            "module": unique[key].module,
            "sequences": seqs,
            "outcomes": outs,
        }
    return out


def _with_output_boundaries(
    unique: Mapping[str, RefactorSpec],
    drawn: dict[str, list[list[Any]]],
    runner: Runner,
    timeout_s: float,
    log: Callable[[str], Any],
) -> dict[str, list[list[Any]]]:
    """For the stateless originals of :data:`STRUCTURED_KINDS` with a list-of-numbers
    argument: run :func:`aggregate_pool` on the original (one sandbox job each) and add
    the calls :func:`select_by_output` keeps to the drawn sequence."""
    pools: dict[str, list[inputs.Call]] = {}
    for key, spec in unique.items():
        if key in drawn and spec.stateless and spec.kind in STRUCTURED_KINDS:
            pool = aggregate_pool(_source(spec), observed_calls(spec), seed=key)
            if pool:
                pools[key] = pool
    if not pools:
        return drawn
    keys = sorted(pools)
    steps = {k: [[{"o": f"{unique[k].module}:{f}", "a": a} for f, a in pools[k]]] for k in keys}
    steps = {k: _canonical(v) for k, v in steps.items()}
    dirs = [_workdir(unique[k].original) for k in keys]
    try:
        results = runner.run_many(
            [_job(d, [_call(steps[k])], timeout_s) for k, d in zip(keys, dirs, strict=True)]
        )
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    out = dict(drawn)
    for key, result in zip(keys, results, strict=True):
        assert isinstance(result, CallResult)
        values = _values(result, 0, 1)
        if values is None:
            log(f"original {key}: its output-boundary pool did not run ({result.detail})")
            continue
        calls: list[inputs.Call] = [
            (str(s["o"]).partition(":")[2], list(s["a"])) for s in steps[key][0]
        ]
        chosen = select_by_output(_source(unique[key]), calls, values[0])
        extra = [{"o": f"{unique[key].module}:{f}", "a": a} for f, a in chosen]
        out[key] = [[*out[key][0], *extra], *out[key][1:]]
        log(f"original {key}: {len(chosen)} output-boundary calls of {len(calls)}")
    return out


def _canonical(value: Any) -> Any:
    """``value`` as the manifest stores it (JSON, keys sorted)."""
    return json.loads(json.dumps(value, sort_keys=True))


# ---------------------------------------------------------------- measurement
@dataclass(frozen=True)
class MutantRecord:
    """One independent-operator mutant of one original, and what saw it."""

    origin_key: str
    module: str
    site: str
    operator: str
    description: str
    #: ``"tuning"`` or ``"held_out"`` (a fixed split by hash of original and mutant).
    half: str
    killed_before: bool  # by the kind's own hidden checks
    killed: bool  # by the hidden checks with the adequacy checks
    detectable: bool  # by the checks or the fuzzing set

    @property
    def equivalent(self) -> bool:
        return not self.detectable


def half_of(origin_key: str, mutant_source: str) -> str:
    """A mutant's half of the corpus, fixed by its content (not tunable)."""
    digest = hashlib.sha256(f"{origin_key}\0{mutant_source}".encode()).digest()
    return "tuning" if digest[0] % 2 == 0 else "held_out"


def _differs(
    got: list[list[dict[str, Any]]] | None,
    want: list[list[dict[str, Any]]],
    stable: list[list[bool]] | None = None,
) -> bool:
    """Whether a mutant's outcomes differ from the original's on any (stable) step; a
    failed run differs."""
    if got is None or len(got) != len(want):
        return True
    for i, (row, want_row) in enumerate(zip(got, want, strict=True)):
        if not isinstance(row, list) or len(row) != len(want_row):
            return True
        for j, (g, w) in enumerate(zip(row, want_row, strict=True)):
            if stable is not None and not stable[i][j]:
                continue
            if not outcome_matches(g, w):
                return True
    return False


def measure(
    specs: Sequence[RefactorSpec],
    adequacy: Mapping[str, Mapping[str, Any]],
    runner: Runner,
    *,
    seed: int = ADEQUACY_SEED,
    chunk: int = 6,
    timeout_s: float = 30.0,
    processes: int = 1,
    log: Callable[[str], Any] = lambda _: None,
) -> list[MutantRecord]:
    """Run every independent-operator mutant of each distinct original of ``specs``
    against its hidden checks (the kind's own, then with the ``adequacy`` entry's) and
    the fuzzing set; one record per mutant."""
    unique: dict[str, RefactorSpec] = {}
    for spec in specs:
        if spec.origin_key in adequacy:
            unique.setdefault(spec.origin_key, spec)
    plans = []
    fuzzing = draw_all(
        {s.task_id: s for s in unique.values()}, seed=seed, fuzz=True, processes=processes
    )
    for key, spec in sorted(unique.items()):
        base = spec.origin_sequences()
        oracle = [[{"o": s["t"], "a": s["a"]} for s in seq] for seq in spec.oracle]
        fuzz = fuzzing[spec.task_id] + oracle
        sets = [
            [[{"o": s["t"], "a": s["a"]} for s in seq] for seq in base],
            list(adequacy[key]["sequences"]),
            fuzz,
        ]
        found = operators.mutants(_source(spec))
        plans.append((key, spec, sets, found))
    log(f"{sum(len(p[3]) for p in plans)} mutants of {len(plans)} originals")
    jobs: list[CallJob] = []
    owners: list[tuple[int, int | None, list[int]]] = []  # plan, None=original, mutants
    dirs: list[Path] = []
    try:
        for index, (_, spec, sets, found) in enumerate(plans):
            directory = _workdir(spec.original)
            dirs.append(directory)
            calls = [_call(s) for s in sets] * 2
            jobs.append(_job(directory, calls, timeout_s))
            owners.append((index, None, []))
            for start in range(0, len(found), chunk):
                part = list(range(start, min(start + chunk, len(found))))
                files = {f"_fgmut_{i}.py": found[i].source for i in part}
                directory = _workdir({**spec.original, **files})
                dirs.append(directory)
                calls = [_call(s, (spec.module, f"_fgmut_{i}")) for i in part for s in sets]
                jobs.append(_job(directory, calls, timeout_s))
                owners.append((index, 0, part))
        started = time.perf_counter()
        results = runner.run_many(jobs)
        log(f"ran {len(jobs)} jobs in {time.perf_counter() - started:.0f}s")
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    originals: dict[int, tuple[list[Any], list[list[list[bool]]]]] = {}
    for (index, kind, _), result in zip(owners, results, strict=True):
        if kind is not None:
            continue
        assert isinstance(result, CallResult)
        sets = plans[index][2]
        maybe_first = [_values(result, i, len(s)) for i, s in enumerate(sets)]
        maybe_second = [_values(result, len(sets) + i, len(s)) for i, s in enumerate(sets)]
        first = [v for v in maybe_first if v is not None]
        second = [v for v in maybe_second if v is not None]
        if len(first) + len(second) != 2 * len(sets):
            log(f"original of {plans[index][1].module} failed: {result.detail}")
            continue
        stable = [
            [
                [
                    outcome_matches(g, w) and g.get("e") not in _BAD
                    for g, w in zip(ra, rb, strict=True)
                ]
                for ra, rb in zip(a, b, strict=True)
            ]
            for a, b in zip(first, second, strict=True)
        ]
        originals[index] = (first, stable)
    records: list[MutantRecord] = []
    for (index, kind, part), result in zip(owners, results, strict=True):
        if kind is None or index not in originals:
            continue
        assert isinstance(result, CallResult)
        key, spec, sets, found = plans[index]
        want, stable = originals[index]
        for offset, i in enumerate(part):
            got = [_values(result, offset * len(sets) + j, len(s)) for j, s in enumerate(sets)]
            # The kind's own checks and the adequacy checks are what grading compares
            # (the original answered them stably: unstable steps were dropped); the
            # fuzzing set only decides equivalence, on its stable steps.
            before = _differs(got[0], want[0])
            killed = before or _differs(got[1], want[1])
            detectable = killed or _differs(got[2], want[2], stable[2])
            mutant = found[i]
            records.append(
                MutantRecord(
                    origin_key=key,
                    module=spec.module,
                    site=mutant.site.label(),
                    operator=mutant.site.operator,
                    description=mutant.description,
                    half=half_of(key, mutant.source),
                    killed_before=before,
                    killed=killed,
                    detectable=detectable,
                )
            )
    return records


def kill_rates(records: Sequence[MutantRecord]) -> dict[str, dict[str, float | int]]:
    """Per origin key: non-equivalent mutants, and the share the checks kill before and
    with the adequacy checks (1.0 when every mutant is equivalent)."""
    out: dict[str, dict[str, float | int]] = {}
    for key in sorted({r.origin_key for r in records}):
        mine = [r for r in records if r.origin_key == key and r.detectable]
        n = len(mine)
        out[key] = {
            "mutants": sum(r.origin_key == key for r in records),
            "non_equivalent": n,
            "before": sum(r.killed_before for r in mine) / n if n else 1.0,
            "after": sum(r.killed for r in mine) / n if n else 1.0,
        }
    return out


# ---------------------------------------------------------------- the manifest
def main(argv: list[str] | None = None) -> None:
    from forgegym.envs.refactor.bank import MANIFEST_PATH, find_spec, load_manifest
    from forgegym.sandbox.runners import get_default_runner

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="do not write the manifest")
    parser.add_argument("--seed", type=int, default=ADEQUACY_SEED)
    parser.add_argument("--processes", type=int, default=1, help="drawing processes")
    parser.add_argument(
        "--rerun", action="store_true", help="recompute the outcomes of the stored inputs"
    )
    parser.add_argument(
        "--kinds",
        default="",
        help="comma-separated kinds: redraw only their originals (the others' entries kept)",
    )
    args = parser.parse_args(argv)
    manifest = dict(load_manifest())
    kinds = {k for k in args.kinds.split(",") if k}
    by_key: dict[str, str] = {}
    for entry in manifest["tasks"]:
        if kinds and entry["task_id"].split("/")[1] not in kinds:
            continue
        by_key.setdefault(entry["origin_key"], entry["task_id"])
    specs = [find_spec(task_id) for task_id in by_key.values()]
    start = time.perf_counter()
    stored = manifest.get("adequacy", {}) if args.rerun else {}
    entries = adequacy_entries(
        specs,
        get_default_runner(),
        seed=args.seed,
        processes=args.processes,
        drawn={k: v["sequences"] for k, v in stored.items()} if args.rerun else None,
        log=print,
    )
    steps = sum(len(s) for e in entries.values() for s in e["sequences"])
    print(
        f"{len(entries)}/{len(specs)} originals, {steps} adequacy calls "
        f"({time.perf_counter() - start:.0f}s)"
    )
    if args.dry_run:
        return
    kept = dict(manifest.get("adequacy", {})) if kinds else {}
    manifest["adequacy"] = dict(sorted({**kept, **entries}.items()))
    with gzip.open(MANIFEST_PATH, "wt", encoding="utf-8") as handle:
        json.dump(manifest, handle, sort_keys=True, separators=(",", ":"))


if __name__ == "__main__":
    main()
