"""Behaviour checks of real-bank tasks: the mutated function against the pristine one.

A real task's reference is the project's own pristine function, so its grading need not
rest on the project's tests alone (whose verdicts come from the process that runs the
candidate). The checks are differential, as the generated Bugfix bank's hidden checks:

1. **Inputs.** The calls the task's fail-to-pass and pass-to-pass tests make into the
   mutated function, recorded on the *pristine* project by the factory's trusted pytest
   plugin (``record`` mode of :mod:`forgegym.tasklib.factory.harness`): the receiver and
   the arguments at entry, encoded as tagged plain JSON by :mod:`forgegym.tasklib.probe`
   (a call whose values cannot be encoded, a lambda or a foreign object, is skipped).
   Derived inputs follow: boundary and perturbed values of each recorded plain argument
   (an int's neighbours and zero, a string cut, doubled or upper-cased, a list emptied,
   cut or reversed), one argument at a time.
2. **Expected values.** The pristine project runs every call in the sandbox, twice, in two
   fresh processes; a call whose outcome differs between them (time, randomness,
   addresses) or that the probe could not rebuild is dropped. The task's starting
   (mutated) project runs them once: the calls whose outcome differs from the pristine
   one are the *discriminating* calls, the ones the bug shows on. Nothing but the
   pristine project and the task's own mutant runs here (no agent code), and the
   expected values stay in the parent: the candidate's child receives inputs only.
3. **Grading** (:func:`compare`): the candidate's project runs the same calls in one
   sandbox job; the parent compares each outcome (the return value, the receiver and
   arguments after the call, or the exception's type) with the pristine one.

A task whose checks have no discriminating call (no test call could be recorded, or none
shows the bug) keeps the tests-only grading and says so (:attr:`BehaviourChecks.status`).

Everything is cached on disk per task, keyed by the task id, the sdist's sha256 and the
probe's and recorder's source, under ``$FORGEGYM_BEHAVIOUR_DIR`` (default
``~/.cache/forgegym/behaviour``): a task's checks are computed at its first use.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from forgegym.envs.bugfix.clock_reads import function_reads_clock
from forgegym.sandbox.atomic import write_atomic
from forgegym.sandbox.jobs import CallJob, CallResult, CallSpec, ProjectRun, pristine_manifest
from forgegym.sandbox.workspace import Workspace
from forgegym.tasklib.inputs import perturbed_values
from forgegym.tasklib.project import is_test_file

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner
    from forgegym.tasklib.factory.build import PreparedProject

__all__ = [
    "BehaviourCall",
    "BehaviourChecks",
    "BehaviourVerdict",
    "behaviour_checks",
    "call_job",
    "compare",
    "derive_calls",
    "same_outcome",
]

#: Bumped when what a cached check means changes.
FORMAT = 1
PROBE_TARGET = "forgegym.tasklib.probe:call"
#: The most calls recorded from the tests, and the most derived from them.
MAX_RECORDED = 60
MAX_DERIVED = 60
PER_CALL_TIMEOUT_S = 2.0
_PROBE_ERROR = "ProbeInputError"


class BehaviourCall(BaseModel):  # type: ignore[no-redef]  # a field named kwargs, see SetupHook
    """One call of the function: the encoded receiver and arguments."""

    model_config = ConfigDict(frozen=True)

    kind: str
    receiver: Any = None
    args: list[Any] = Field(default_factory=list)
    kwargs: list[Any] = Field(default_factory=list)
    #: The test that made the call (``None``: derived from a recorded call).
    test: str | None = None


class BehaviourChecks(BaseModel):
    """A task's behaviour checks (parent-side only: ``expected`` never enters a child)."""

    status: Literal["checked", "no_calls", "no_discriminating", "unavailable", "reads_clock"]
    note: str = ""
    module: str = ""
    qualname: str = ""
    packages: list[str] = Field(default_factory=list)
    #: Test folders without ``__init__.py`` (pytest's rootdir imports), put on the call
    #: job's import path after the project's roots: a test's own class may be an input.
    test_paths: list[str] = Field(default_factory=list)
    calls: list[BehaviourCall] = Field(default_factory=list)
    #: The pristine outcome of each call: ``{"ok": true, "value": ...}`` or
    #: ``{"ok": false, "error_type": ...}``.
    expected: list[dict[str, Any]] = Field(default_factory=list)
    #: Indices of the calls on which the task's mutant differs from the pristine project.
    discriminating: list[int] = Field(default_factory=list)

    @property
    def active(self) -> bool:
        """Whether the checks grade (some call shows the bug)."""
        return self.status == "checked" and bool(self.discriminating)

    @property
    def derived_discriminating(self) -> list[int]:
        """The discriminating calls no test made (held-out inputs)."""
        return [i for i in self.discriminating if self.calls[i].test is None]


class BehaviourVerdict(BaseModel):
    """How a candidate fared on a task's behaviour checks."""

    total: int
    matched: int
    discriminating: int
    discriminating_matched: int
    derived: int
    derived_matched: int
    #: The first few mismatches (index, what was expected, what came).
    mismatches: list[str] = Field(default_factory=list)

    @property
    def all_matched(self) -> bool:
        return self.matched == self.total

    @property
    def share(self) -> float:
        """The fixed share on the discriminating calls."""
        return self.discriminating_matched / self.discriminating if self.discriminating else 1.0

    @property
    def derived_share(self) -> float:
        """The fixed share on the discriminating calls no test made (1.0 when none)."""
        return self.derived_matched / self.derived if self.derived else 1.0

    @property
    def regression(self) -> float:
        """The share of non-discriminating calls (pristine and mutant agree) now broken."""
        others = self.total - self.discriminating
        broken = others - (self.matched - self.discriminating_matched)
        return broken / others if others else 0.0


# ----------------------------------------------------------------------- comparing
def _same(a: Any, b: Any, depth: int = 0) -> bool:
    if depth > 64:
        return False
    if type(a) is not type(b):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            if isinstance(a, bool) or isinstance(b, bool):
                return False
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return False
    if isinstance(a, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], depth + 1) for k in a)
    return bool(a == b)


def outcome_of(result: CallResult, index: int) -> dict[str, Any]:
    """Call ``index``'s outcome as the checks store it (a missing one is a failure)."""
    outcome = result.outcome(index)
    if outcome.ok:
        return {"ok": True, "value": outcome.value}
    return {"ok": False, "error_type": outcome.error_type or "error"}


def _reported(result: CallResult, index: int) -> dict[str, Any]:
    """Call ``index``'s outcome as the child reported it (the run may not have completed)."""
    outcome = result.outcomes[index]
    if outcome.ok:
        return {"ok": True, "value": outcome.value}
    return {"ok": False, "error_type": outcome.error_type or "error"}


def same_outcome(expected: Mapping[str, Any], got: Mapping[str, Any]) -> bool:
    """Whether two outcomes agree: both returned equal values (floats to 1e-9), or both
    raised exceptions of the same type."""
    if bool(expected.get("ok")) != bool(got.get("ok")):
        return False
    if expected.get("ok"):
        return _same(expected.get("value"), got.get("value"))
    return expected.get("error_type") == got.get("error_type")


def compare(checks: BehaviourChecks, result: CallResult) -> BehaviourVerdict:
    """The candidate's outcomes (``result`` of :func:`call_job`) against the pristine."""
    discriminating = set(checks.discriminating)
    derived = set(checks.derived_discriminating)
    matched = dm = rm = 0
    mismatches: list[str] = []
    for index, expected in enumerate(checks.expected):
        got = outcome_of(result, index)
        if same_outcome(expected, got):
            matched += 1
            dm += index in discriminating
            rm += index in derived
        elif len(mismatches) < 3:
            mismatches.append(f"call {index}: {_brief(expected)} expected, got {_brief(got)}")
    return BehaviourVerdict(
        total=len(checks.expected),
        matched=matched,
        discriminating=len(discriminating),
        discriminating_matched=dm,
        derived=len(derived),
        derived_matched=rm,
        mismatches=mismatches,
    )


def _brief(outcome: Mapping[str, Any]) -> str:
    if outcome.get("ok"):
        return "a value"
    return f"{outcome.get('error_type')}"


# ------------------------------------------------------------------------- jobs
def call_job(
    workdir: str,
    checks: BehaviourChecks,
    project: ProjectRun | None,
    timeout_s: float = 60.0,
    pristine: Mapping[str, str] | None = None,
) -> CallJob:
    """The sandbox job that runs every call of ``checks`` on the project in ``workdir``
    (inputs only: the expected outcomes stay with the caller). ``pristine``: the files of
    ``workdir`` that are the task's pristine project, by sha256 (``PytestJob.pristine``):
    trusted code, as in the pytest job of the same grading, so that a project module the
    agent did not change may use what the runtime policy refuses to changed code (attrs
    and cron-descriptor reach for frames: every call of 11 sampled tasks crashed)."""
    specs = [
        CallSpec(
            target=PROBE_TARGET,
            args=[
                checks.module,
                checks.qualname,
                call.kind,
                call.receiver,
                call.args,
                call.kwargs,
                checks.packages,
            ],
        )
        for call in checks.calls
    ]
    if project is not None and checks.test_paths:
        paths = [*project.import_paths, *checks.test_paths]
        project = project.model_copy(update={"import_paths": list(dict.fromkeys(paths))})
    return CallJob(
        workdir=workdir,
        calls=specs,
        timeout_s=min(600.0, max(timeout_s, 10.0 + PER_CALL_TIMEOUT_S * len(specs) / 4)),
        per_call_timeout_s=PER_CALL_TIMEOUT_S,
        project=project,
        python_hash_seed=0,
        pristine=dict(pristine or {}),
    )


# ------------------------------------------------------------------ derived inputs
def derive_calls(
    calls: Sequence[BehaviourCall], seed: str, limit: int = MAX_DERIVED
) -> list[BehaviourCall]:
    """Calls derived from ``calls``: each plain positional or keyword argument replaced
    by one of its variants (:func:`~forgegym.tasklib.inputs.perturbed_values`), one
    argument at a time; deduplicated, none equal to a recorded call, at most ``limit``,
    chosen with a ``seed``-ed RNG."""
    seen = {json.dumps(c.model_dump(exclude={"test"}), sort_keys=True) for c in calls}
    pool: list[BehaviourCall] = []
    for call in calls:
        for i, arg in enumerate(call.args):
            for variant in perturbed_values(arg):
                args = [*call.args[:i], variant, *call.args[i + 1 :]]
                pool.append(call.model_copy(update={"args": args, "test": None}))
        for i, pair in enumerate(call.kwargs):
            if not (isinstance(pair, list) and len(pair) == 2):
                continue
            for variant in perturbed_values(pair[1]):
                kwargs = [*call.kwargs[:i], [pair[0], variant], *call.kwargs[i + 1 :]]
                pool.append(call.model_copy(update={"kwargs": kwargs, "test": None}))
    out: list[BehaviourCall] = []
    for call in pool:
        key = json.dumps(call.model_dump(exclude={"test"}), sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(call)
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    if len(out) > limit:
        out = rng.sample(out, limit)
    return out


# --------------------------------------------------------------------- building
def behaviour_dir() -> Path:
    """``$FORGEGYM_BEHAVIOUR_DIR``, else ``~/.cache/forgegym/behaviour``."""
    env = os.environ.get("FORGEGYM_BEHAVIOUR_DIR")
    return Path(env) if env else Path.home() / ".cache" / "forgegym" / "behaviour"


@functools.cache
def _source_key() -> str:
    here = Path(__file__)
    parts = [
        here.read_bytes(),
        (here.parents[2] / "tasklib" / "probe.py").read_bytes(),
        (here.parents[2] / "tasklib" / "factory" / "harness.py").read_bytes(),
        str(FORMAT).encode(),
    ]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


def project_packages(files: Mapping[str, str], import_paths: Sequence[str]) -> list[str]:
    """The project's top-level importable names (what a probe may rebuild objects of)."""
    roots = [p.strip("/") for p in import_paths if p.strip("/")] + [""]
    names: set[str] = set()
    for path in files:
        if not path.endswith(".py"):
            continue
        for root in roots:
            prefix = f"{root}/" if root else ""
            if path.startswith(prefix):
                first = PurePosixPath(path[len(prefix) :]).parts[0]
                name = first[:-3] if first.endswith(".py") else first
                # test modules too: a test's own helper class may be an argument
                if name.isidentifier() and name not in ("setup", "conftest"):
                    names.add(name)
                break
    return sorted(names)


def rootdir_test_modules(files: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The folders of test files that pytest imports by their bare name (no
    ``__init__.py`` beside them) and those modules' names."""
    folders: set[str] = set()
    names: set[str] = set()
    for path in files:
        pure = PurePosixPath(path)
        if pure.suffix != ".py" or not is_test_file(path) or pure.stem == "conftest":
            continue
        folder = str(pure.parent) if str(pure.parent) != "." else ""
        if not folder or f"{folder}/__init__.py" in files or not pure.stem.isidentifier():
            continue
        folders.add(folder)
        names.add(pure.stem)
    return sorted(folders), sorted(names)


def record_calls(
    prepared: PreparedProject,
    file: str,
    function: str,
    tests: Sequence[str],
    packages: Sequence[str],
    *,
    timeout_s: float = 180.0,
) -> dict[str, Any]:
    """Run ``tests`` of the pristine project on the host with the factory's trusted
    recorder and return its answer (module, kind, calls)."""
    from forgegym.tasklib.factory.build import FactoryError, _Runner

    work = Path(tempfile.mkdtemp(prefix="fg-behaviour-"))
    try:
        host = _Runner(prepared, sys.executable, timeout_s, work)
        request = {
            "file": file,
            "function": function,
            "limit": MAX_RECORDED,
            "per_test": 6,
            "packages": list(packages),
        }
        try:
            return host.pytest("record", list(tests), request=request)
        except FactoryError as exc:
            return {"calls": [], "error": str(exc)[:300]}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(
    runner: Runner,
    files: Mapping[str, str],
    checks: BehaviourChecks,
    project: ProjectRun | None,
    data: Mapping[str, bytes] | None = None,
    pristine: Mapping[str, str] | None = None,
) -> CallResult:
    """The calls of ``checks`` on ``files``; ``pristine``: the files trusted as grading
    trusts them (:func:`call_job`)."""
    space = Workspace(dict(files), (), prefix="fg-behaviour-", data_files=data)
    try:
        job = call_job(str(space.materialise({})), checks, project, pristine=pristine)
        result = runner.run(job)
        assert isinstance(result, CallResult)
        return result
    finally:
        space.close()


def compute_checks(
    task_id: str,
    prepared: PreparedProject,
    entry: Mapping[str, Any],
    mutated_files: Mapping[str, str],
    runner: Runner,
) -> BehaviourChecks:
    """Record, derive and run the checks of one real task (see the module doc)."""
    function = entry["mutation"][0]
    test_paths, test_names = rootdir_test_modules(prepared.files)
    packages = project_packages(prepared.files, prepared.layout.import_paths)
    packages = sorted({*packages, *test_names})
    tests = list(dict.fromkeys([*entry["f2p"], *entry.get("p2p", [])[:40]]))
    answer = record_calls(prepared, entry["file"], function, tests, packages)
    recorded = [
        BehaviourCall(
            kind=c["kind"],
            receiver=c.get("receiver"),
            args=c["args"],
            kwargs=c["kwargs"],
            test=c.get("test") or "",
        )
        for c in answer.get("calls", [])
    ]
    base = {
        "module": answer.get("module") or "",
        "qualname": function,
        "packages": packages,
        "test_paths": test_paths,
    }
    if not recorded or not base["module"]:
        why = answer.get("error") or (
            f"no reproducible call: {answer.get('seen', 0)} calls seen, "
            f"{answer.get('skipped', 0)} with values that cannot be encoded "
            f"({'; '.join(answer.get('why', {}))})"
        )
        return BehaviourChecks(status="no_calls", note=str(why)[:300], **base)
    calls = [*recorded, *derive_calls(recorded, task_id)]
    draft = BehaviourChecks(status="checked", calls=calls, **base)
    project = prepared.run
    pristine = dict(prepared.files)
    data = prepared.data_files
    # Trusted as grading trusts them: every file but the module the task mutates (the
    # one a submission changes), the same for the pristine and the mutated runs.
    trusted = pristine_manifest(pristine, data)
    trusted.pop(str(entry["file"]), None)
    first, second = (_run(runner, pristine, draft, project, data, trusted) for _ in range(2))
    mutant = _run(runner, mutated_files, draft, project, data, trusted)
    if first.fault or second.fault or mutant.fault:
        return BehaviourChecks(
            status="unavailable",
            note=f"sandbox fault: {first.fault or second.fault or mutant.fault}",
            **base,
        )
    # A pristine run cut short (its time limit) still answers for the calls it reached.
    reached = min(len(first.outcomes), len(second.outcomes))
    keep: list[int] = []
    for index in range(reached):
        a, b = _reported(first, index), _reported(second, index)
        if not same_outcome(a, b) or a.get("error_type") in (_PROBE_ERROR, "TimeoutError"):
            continue
        keep.append(index)
    kept_calls = [calls[i] for i in keep]
    expected = [_reported(first, i) for i in keep]
    discriminating = [
        j
        for j, i in enumerate(keep)
        if i >= len(mutant.outcomes) or not same_outcome(expected[j], _reported(mutant, i))
    ]
    if not kept_calls:
        errors = sorted({str(_reported(first, i).get("error_type")) for i in range(reached)})
        return BehaviourChecks(
            status="no_calls",
            note=f"no recorded call ran the same twice on the pristine project "
            f"(first run: {first.status.value} {first.detail[:80]}; errors {errors[:3]})",
            **base,
        )
    status: Literal["checked", "no_discriminating"] = (
        "checked" if discriminating else "no_discriminating"
    )
    note = (
        f"{len(recorded)} recorded calls, {len(calls) - len(recorded)} derived; "
        f"{len(kept_calls)} reproducible, {len(discriminating)} show the bug"
    )
    return BehaviourChecks(
        status=status,
        note=note,
        calls=kept_calls,
        expected=expected,
        discriminating=discriminating,
        **base,
    )


def behaviour_checks(
    task_id: str,
    prepared: PreparedProject,
    entry: Mapping[str, Any],
    mutated_files: Mapping[str, str],
    runner: Runner | None = None,
    cache: Path | None = None,
) -> BehaviourChecks:
    """The task's checks, from the cache or computed once (:func:`compute_checks`); none
    for a function that reads the clock or entropy (:mod:`.clock_reads`), whose recorded
    outcomes would fail the pristine function itself later (decided before the cache is
    read, so checks cached before this rule do not grade such a task either)."""
    qualname = entry["mutation"][0]
    read = function_reads_clock(prepared.files.get(entry["file"], ""), qualname)
    if read is not None:
        return BehaviourChecks(
            status="reads_clock",
            qualname=qualname,
            note=f"the function reads the clock or entropy ({read}): its outcomes change "
            "between runs, so its tests alone grade it",
        )
    folder = (
        cache or behaviour_dir()
    ) / f"{entry['project']}-{entry['version']}-{entry['sha256'][:12]}"
    key = hashlib.sha256(f"{task_id}\0{entry['sha256']}\0{_source_key()}".encode()).hexdigest()[:32]
    path = folder / f"{key}.json"
    if path.is_file():
        try:
            return BehaviourChecks.model_validate_json(path.read_text())
        except ValueError:
            pass
    if runner is None:
        from forgegym.sandbox.runners import get_default_runner

        runner = get_default_runner()
    checks = compute_checks(task_id, prepared, entry, mutated_files, runner)
    if checks.status != "unavailable":
        write_atomic(path, checks.model_dump_json())
    return checks
