"""Task generation for ``Forge/Performance-v0`` and the validated manifest.

A task is ``(structure, start state, workload profile)``: one of the data structures of
:mod:`~forgegym.envs.performance.catalog`, one of three start states (``stub``: implement
it; ``naive``: a correct implementation that is O(n) per operation where O(1)/O(log n) is
asked; ``bugK``: a fast implementation with injected bug K) and one workload profile
(read-heavy, write-heavy, balanced, skewed keys) that shapes the hidden traces. Levels:
1 = stub, 2 = naive, 3 = fast but buggy. The seed task ``performance/lru/seed`` is the
LRU stub.

Visible tests are short public traces (fixed public seeds, never used by grading) whose
expected values come from the reference (15 on the seed task, 12 elsewhere); they never
time anything: speed is the grader's business.

``python -m forgegym.envs.performance.generator`` grades, for every candidate task, the
reference and the start state in the sandbox and writes ``data/manifest.json`` with the
tasks whose reference succeeds and whose start state does not (naive: correct but fails
the complexity gate; stub and bugs: fail the hidden traces).
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgegym.core.task import Task
from forgegym.envs.performance import traces
from forgegym.envs.performance.catalog import STRUCTURES, Structure, structure
from forgegym.envs.performance.hidden import PerformanceHidden

__all__ = [
    "DIFFICULTY_LEVELS",
    "MANIFEST_PATH",
    "PerformanceGeneratorConfig",
    "build_task",
    "candidate_keys",
    "parse_task_id",
]

FAMILY = "performance"
MANIFEST_PATH = Path(__file__).parent / "data" / "manifest.json"
DIFFICULTY_LEVELS: tuple[int, ...] = (1, 2, 3)
SEED_TASK_ID = "performance/lru/seed"
PUBLIC_TRACES = 12
SEED_PUBLIC_TRACES = 15
_PUBLIC_SEED = 20_240_601


@dataclass(frozen=True)
class PerformanceGeneratorConfig:
    """Which candidate tasks to generate (all by default)."""

    structures: tuple[str, ...] = tuple(STRUCTURES)
    profiles: tuple[str, ...] = tuple(traces.PROFILES)
    starts: tuple[str, ...] = ("stub", "naive", "bugs")

    def validate(self) -> PerformanceGeneratorConfig:
        for name in self.structures:
            structure(name)
        for profile in self.profiles:
            if profile not in traces.PROFILES:
                raise ValueError(f"profiles: unknown profile {profile!r}")
        for start in self.starts:
            if start not in ("stub", "naive", "bugs"):
                raise ValueError(f"starts: unknown start state {start!r}")
        return self


def _starts(s: Structure, kinds: tuple[str, ...]) -> Iterator[str]:
    if "stub" in kinds:
        yield "stub"
    if "naive" in kinds:
        yield "naive"
    if "bugs" in kinds:
        yield from (f"bug{i}" for i in range(len(s.bugs)))


def candidate_keys(config: PerformanceGeneratorConfig | None = None) -> list[tuple[str, str, str]]:
    """Every ``(structure, start, profile)`` the generator can build."""
    config = (config or PerformanceGeneratorConfig()).validate()
    return [
        (name, start, profile)
        for name in config.structures
        for start in _starts(STRUCTURES[name], config.starts)
        for profile in config.profiles
    ]


def task_id_for(name: str, start: str, profile: str) -> str:
    return f"{FAMILY}/{name}/{start}/{profile}"


def parse_task_id(task_id: str) -> tuple[str, str, str]:
    """``(structure, start, profile)`` of a task id (the seed id included)."""
    if task_id == SEED_TASK_ID:
        return ("lru", "stub", "balanced")
    parts = task_id.split("/") if isinstance(task_id, str) else []
    if len(parts) != 4 or parts[0] != FAMILY:
        raise ValueError(f"task_id: not a performance task id: {task_id!r}")
    name, start, profile = parts[1:]
    s = structure(name)
    if start not in ("stub", "naive") and not (
        start.startswith("bug") and start[3:].isdigit() and int(start[3:]) < len(s.bugs)
    ):
        raise ValueError(f"task_id: unknown start state {start!r} for {name}")
    if profile not in traces.PROFILES:
        raise ValueError(f"task_id: unknown profile {profile!r}")
    return name, start, profile


def level_of(start: str) -> int:
    return {"stub": 1, "naive": 2}.get(start, 3)


# --------------------------------------------------------------- visible tests
def _reference_class(s: Structure, bug: int | None = None) -> type:
    """The reference class (``bug``: the reference with that catalogue bug, which a
    canary's visible tests and hidden oracle follow)."""
    namespace: dict[str, Any] = {"__name__": f"_reference_{s.module}"}
    source = s.source("reference") if bug is None else s.buggy_source(bug)
    exec(compile(source, f"<reference {s.name}>", "exec"), namespace)  # noqa: S102 - trusted reference source
    return namespace[s.class_name]


class _Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def replay(s: Structure, trace: traces.Trace, bug: int | None = None) -> list[Any]:
    """The reference's outputs on ``trace`` (``bug``: the reference with that catalogue
    bug), JSON-plain as the sandbox child reports them."""
    klass = _reference_class(s, bug)
    clock = _Clock()
    obj = klass(*[clock if a == traces.CLOCK else a for a in trace.init])
    out: list[Any] = []
    for name, args in trace.ops:
        if name == traces.ADVANCE:
            clock.now += args[0]
            out.append(None)
        elif name == traces.CONCURRENT:
            out.append(True)
        else:
            out.append(getattr(obj, name)(*args))
    return json.loads(json.dumps(out))  # tuples -> lists, as the child reports them


def _literal(value: Any) -> str:
    return repr(value)


@functools.lru_cache(maxsize=64)
def visible_tests(
    name: str, profile: str, count: int = PUBLIC_TRACES, bug: int | None = None
) -> tuple[str, tuple[str, ...]]:
    """The visible test file of ``(structure, profile)`` (``count`` public traces) and its
    test names (``bug``: the outputs of the reference with that catalogue bug, which
    contradict the contract: a canary's tests). Self-contained: the sandbox child of a test run imports nothing of
    forgegym."""
    s = structure(name)
    uses_clock = any(
        a == traces.CLOCK for a in traces.generate(name, random.Random(0), 2, 2, profile).init
    )
    lines = [
        f'"""Public tests of `{s.path}`. The grader replays many more hidden traces and',
        'measures speed itself; these never time anything."""',
        "",
        "import json",
        "",
        f"from {s.module} import {s.class_name}",
        "",
        "",
        "class FakeClock:",
        '    """The injected clock: integer ticks, advanced by the test."""',
        "",
        "    def __init__(self):",
        "        self.now = 0",
        "",
        "    def __call__(self):",
        "        return self.now",
        "",
    ]
    names: list[str] = []
    rng = random.Random(f"{_PUBLIC_SEED}/{name}/{profile}")
    for index in range(count):
        size = 2 + index % 4
        trace = traces.generate(name, random.Random(rng.randrange(1 << 30)), size, 10, profile)
        trace.ops = [op for op in trace.ops if op[0] != traces.CONCURRENT]
        outputs = replay(s, trace, bug)
        test = f"test_public_trace_{index + 1:02d}"
        names.append(test)
        lines += ["", "", f"def {test}():"]
        if uses_clock:
            lines.append("    clock = FakeClock()")
        init = ", ".join("clock" if a == traces.CLOCK else _literal(a) for a in trace.init)
        lines.append(f"    s = {s.class_name}({init})")
        for (op, args), value in zip(trace.ops, outputs, strict=True):
            if op == traces.ADVANCE:
                lines.append(f"    clock.now += {args[0]}")
                continue
            call = f"s.{op}({', '.join(_literal(a) for a in args)})"
            if value is None or isinstance(value, bool):
                lines.append(f"    assert {call} is {value!r}")
            elif isinstance(value, list):
                lines.append(f"    assert list_of({call}) == {value!r}")
            else:
                lines.append(f"    assert {call} == {value!r}")
    lines += [
        "",
        "",
        "def list_of(value):",
        '    """Tuples and lists compare alike (results travel as JSON)."""',
        "    return json.loads(json.dumps(value))",
    ]
    return "\n".join(lines) + "\n", tuple(names)


# --------------------------------------------------------------------- tasks
_START_TEXT = {
    "stub": "The module is a stub: implement `{cls}` so that every operation runs in "
    "{cx} time (amortised).",
    "naive": "The module works, but it is too slow: some operations take O(n) time in "
    "the number of elements. Make every operation {cx} (amortised) without changing its "
    "behaviour.",
    "bug": "The module is fast but wrong: users report results that differ from the "
    "contract on some workloads. Find and fix the bug without making it slower than {cx} "
    "per operation.",
}
_PROFILE_TEXT = {
    "balanced": "about as many reads as writes, keys drawn uniformly",
    "read_heavy": "mostly reads",
    "write_heavy": "mostly writes",
    "skewed": "a few hot keys/values take most of the traffic",
}


def build_task(task_id: str) -> Task:
    """The task with this id (pure, deterministic)."""
    name, start, profile = parse_task_id(task_id)
    s = structure(name)
    if start.startswith("bug"):
        source = s.buggy_source(int(start[3:]))
        start_text = _START_TEXT["bug"]
    else:
        source = s.source(start)
        start_text = _START_TEXT[start]
    seed = task_id == SEED_TASK_ID
    test_source, test_names = visible_tests(
        name, profile, SEED_PUBLIC_TRACES if seed else PUBLIC_TRACES
    )
    intro = (
        f"Implement `LRUCache(capacity)` in `{s.path}` with O(1) `get` and `put`."
        if seed
        else f"Make `{s.class_name}` in `{s.path}` fast: a {s.title} with {s.complexity} "
        "operations."
    )
    description = "\n\n".join(
        [
            intro,
            f"Contract: {s.interface}",
            start_text.format(cls=s.class_name, cx=s.complexity),
            f"Workload: {_PROFILE_TEXT[profile]}.",
            "Grading: hidden operation traces (fresh seeds at every grading) must return "
            "exactly what the reference returns; then the grader measures the CPU time of "
            f"your code in fresh processes at structure sizes {s.size}, {4 * s.size} and "
            f"{16 * s.size} ({s.ops} operations each), next to the reference: the time "
            "must scale like the reference's, and speed at or above 0.95x the "
            "reference's earns full credit. Use only the standard library's containers "
            "and algorithms (collections, heapq, bisect, threading, ...): no files, "
            "processes, timers or dynamic imports. The visible tests are examples.",
        ]
    )
    return Task(
        task_id=task_id,
        family=FAMILY,
        difficulty=level_of(start),
        title=("LRU cache with O(1) operations" if seed else f"Fast {s.title}"),
        description=description,
        files={s.path: source, s.test_path: test_source},
        editable_files=(s.path,),
        visible_test_files=(s.test_path,),
        visible_test_ids=tuple(f"{s.test_path}::{t}" for t in test_names),
        hidden=PerformanceHidden(
            structure=name, profile=profile, start=start, start_correct=start == "naive"
        ),
        reference={s.path: s.source("reference")},
        metadata={
            "structure": name,
            "start": start,
            "profile": profile,
            "complexity": s.complexity,
        },
    )


def digests() -> dict[str, str]:
    return {name: s.digest for name, s in STRUCTURES.items()}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
