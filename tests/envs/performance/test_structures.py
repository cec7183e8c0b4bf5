"""Every structure's traces, reference, naive start and injected bugs (in-process,
trusted code only: the sources shipped in ``data/structures``)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from forgegym.envs.performance import driver, traces
from forgegym.envs.performance.catalog import STRUCTURES, Structure
from forgegym.envs.performance.grader import CORRECTNESS_TRACES
from forgegym.envs.performance.scan import scan_candidate

NAMES = sorted(STRUCTURES)


def _class(s: Structure, source: str) -> Any:
    namespace: dict[str, Any] = {"__name__": f"candidate_{s.module}"}
    exec(compile(source, s.path, "exec"), namespace)  # noqa: S102 - shipped sources
    return namespace[s.class_name]


def _replay(klass: Any, trace: traces.Trace) -> list[Any]:
    clock = driver.Clock()
    obj = klass(*[clock if a == traces.CLOCK else a for a in trace.init])
    out: list[Any] = []
    for name, args in trace.ops:
        if name == traces.ADVANCE:
            clock.now += args[0]
            out.append(None)
        elif name == traces.CONCURRENT:
            out.append(traces.run_concurrent(obj, args))
        else:
            out.append(getattr(obj, name)(*args))
    return json.loads(json.dumps(out))


def _hidden_like(name: str, seed: int, profile: str) -> list[traces.Trace]:
    return [
        traces.generate(name, random.Random(seed * 1000 + size), size, ops, profile)
        for size, ops in CORRECTNESS_TRACES
    ]


def test_fourteen_structures_with_four_bugs_each() -> None:
    assert len(STRUCTURES) == 14
    assert all(len(s.bugs) == 4 for s in STRUCTURES.values())


@pytest.mark.parametrize("name", NAMES)
def test_traces_are_deterministic_and_grow_with_size(name: str) -> None:
    a = traces.generate(name, random.Random(3), 20, 50, "balanced")
    b = traces.generate(name, random.Random(3), 20, 50, "balanced")
    assert a == b
    big = traces.generate(name, random.Random(3), 80, 50, "balanced")
    assert len(big.ops) > len(a.ops) or big.init != a.init


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"structure": "splay"}, "structure"),
        ({"profile": "bursty"}, "profile"),
        ({"size": 0}, "size"),
        ({"ops": True}, "ops"),
    ],
)
def test_generate_names_a_bad_argument(kwargs: dict[str, Any], argument: str) -> None:
    call: dict[str, Any] = {"structure": "lru", "size": 4, "ops": 4, "profile": "balanced"}
    call.update(kwargs)
    with pytest.raises(ValueError, match=argument):
        traces.generate(
            call["structure"], random.Random(0), call["size"], call["ops"], call["profile"]
        )


@pytest.mark.parametrize("name", NAMES)
def test_naive_start_agrees_with_the_reference(name: str) -> None:
    s = STRUCTURES[name]
    reference, naive = _class(s, s.source("reference")), _class(s, s.source("naive"))
    for profile in traces.PROFILES:
        for trace in _hidden_like(name, 7, profile):
            assert _replay(naive, trace) == _replay(reference, trace), profile


def _served_bugs(name: str) -> list[int]:
    """Bug indices of ``name`` the validated manifest serves (validation drops a bug the
    hidden traces do not catch reliably)."""
    from forgegym.envs.performance.bank import load_manifest

    starts = {
        t["id"].split("/")[2] for t in load_manifest()["tasks"] if t["id"].split("/")[1] == name
    }
    return sorted(int(x[3:]) for x in starts if x.startswith("bug"))


@pytest.mark.parametrize("name", NAMES)
def test_every_served_bug_is_caught_by_hidden_traces(name: str) -> None:
    s = STRUCTURES[name]
    reference = _class(s, s.source("reference"))
    for index in _served_bugs(name):
        buggy = _class(s, s.buggy_source(index))
        caught = 0
        for seed in range(3):
            for trace in _hidden_like(name, 100 + seed, "balanced"):
                try:
                    wrong = _replay(buggy, trace) != _replay(reference, trace)
                except Exception:  # noqa: BLE001 - a crash is a caught bug too
                    wrong = True
                if wrong:
                    caught += 1
                    break
        assert caught == 3, f"{name} bug {index} ({s.bugs[index].description})"


@pytest.mark.parametrize("name", NAMES)
def test_stub_raises_and_shipped_sources_pass_the_scan(name: str) -> None:
    s = STRUCTURES[name]
    stub = _class(s, s.source("stub"))
    trace = traces.generate(name, random.Random(0), 3, 5, "balanced")
    with pytest.raises(NotImplementedError):
        _replay(stub, trace)
    for kind in ("reference", "naive", "stub"):
        assert scan_candidate(s.source(kind), s.path) == [], kind


def test_driver_modes_agree_and_null_skips_the_candidate() -> None:
    import sys
    import types

    s = STRUCTURES["lru"]
    module = types.ModuleType("lru_cache_driver_test")
    exec(compile(s.source("reference"), "lru_cache.py", "exec"), module.__dict__)  # noqa: S102
    sys.modules[module.__name__] = module
    try:
        args = (module.__name__, s.class_name, "lru", 5, 8, 40, "balanced")
        outputs = driver.run(*args, "outputs")
        digest = driver.run(*args, "digest")
        again = driver.run(*args, "digest")
        null = driver.run("no_such_module", "Nothing", "lru", 5, 8, 40, "balanced", "null")
    finally:
        del sys.modules[module.__name__]
    assert outputs["n"] == digest["n"] == null["n"] == 48
    assert digest["digest"] == again["digest"] and len(digest["digest"]) == 64
    with pytest.raises(ValueError, match="mode"):
        driver.run(*args, "fast")
