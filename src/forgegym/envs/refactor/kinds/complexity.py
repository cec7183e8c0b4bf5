"""Split a long function so that its cyclomatic complexity falls under a bound.

Template modules: one long pipeline function made of three to five phases (cleaning,
capping, scaling, de-duplicating, bucketing; parameterised constants and order), each
phase a few branches over a list. The refactoring extracts phases into helpers until
every function of the module is at or under the bound, without an explosion in the
number of functions.
"""

from __future__ import annotations

import ast
import functools
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from forgegym.envs.refactor.analysis import complexity, function_defs
from forgegym.envs.refactor.kinds.common import Draft, built, test_ids
from forgegym.envs.refactor.kinds.visible import visible_tests
from forgegym.envs.refactor.spec import RefactorSpec, step

__all__ = ["PHASES", "build", "build_all", "drafts"]

KIND = "reduce_complexity"

#: name -> (helper name, body over ``items`` indented by 4; constants {a}, {b})
PHASES: dict[str, tuple[str, str]] = {
    "clean": (
        "_drop_missing",
        "    cleaned = []\n"
        "    for item in items:\n"
        "        if item is None:\n"
        "            continue\n"
        "        if item < 0:\n"
        "            item = abs(item) + 1\n"
        "        cleaned.append(item)\n"
        "    items = cleaned\n",
    ),
    "cap": (
        "_cap_length",
        "    if len(items) > {b}:\n"
        "        items = items[:{b}] + [len(items) - {b}]\n"
        "    elif not items:\n"
        "        items = [{a}]\n",
    ),
    "scale": (
        "_scale_values",
        "    scaled = []\n"
        "    for value in items:\n"
        "        if value % 2 == 0:\n"
        "            scaled.append(value // 2)\n"
        "        elif value > {a}:\n"
        "            scaled.append(value - {a})\n"
        "        else:\n"
        "            scaled.append(value)\n"
        "    items = scaled\n",
    ),
    "dedupe": (
        "_drop_repeats",
        "    seen = set()\n"
        "    unique = []\n"
        "    for value in items:\n"
        "        if value in seen:\n"
        "            continue\n"
        "        seen.add(value)\n"
        "        unique.append(value)\n"
        "    items = unique\n",
    ),
    "order": (
        "_order_values",
        "    if items and items[0] > items[-1]:\n"
        "        items = sorted(items, reverse=True)\n"
        "    else:\n"
        "        items = sorted(items)\n",
    ),
}
_SUMMARY = (
    "    total = sum(items)\n"
    "    if total > {c}:\n"
    '        label = "high"\n'
    "    elif total > {c} // 2:\n"
    '        label = "mid"\n'
    "    else:\n"
    '        label = "low"\n'
    '    return {{"items": items, "total": total, "label": label}}\n'
)
_NAMES = ("summarize_batch", "process_readings", "digest_scores", "condense_samples")
_DISTRACTOR = (
    "def describe(summary):\n"
    '    """One line for a summary."""\n'
    "    return f\"{summary['label']}: {summary['total']}\"\n"
)


def _inputs(rng: random.Random) -> list[Any]:
    low, high = rng.choice([(-3, 12), (-30, 60), (0, 9)])
    return [[rng.choice([None, 0, rng.randint(low, high)]) for _ in range(rng.randint(0, 12))]]


def _oracle(module: str, name: str, seed: str) -> list[list[dict[str, Any]]]:
    rng = random.Random(seed)
    return [[{"t": f"{module}:{name}", "a": _inputs(rng)} for _ in range(250)]]


@dataclass(frozen=True)
class _Drawn:
    """The seeded choices of one variant and the original module they make."""

    phases: tuple[str, ...]
    a: int
    b: int
    c: int
    name: str
    original: str

    @property
    def module(self) -> str:
        return f"pipeline_{self.name.split('_')[1]}"


_DOC = "Clean, shape and summarise a batch of readings."
_HEADER = '"""Batch processing of sensor readings."""\n'


def _draw(level: int, rng: random.Random) -> _Drawn:
    """All one variant takes from ``rng``, and its original module (cheap)."""
    count = {1: 3, 2: 4, 3: 5}[level]
    phases = rng.sample(sorted(PHASES), count)
    if "clean" in phases:  # cleaning first: later phases assume numbers
        phases.remove("clean")
        phases.insert(0, "clean")
    else:
        phases[0] = "clean"
    a, b, c = rng.randint(3, 9), rng.randint(4, 9), rng.randint(40, 120)
    name = rng.choice(_NAMES)
    body = "".join(PHASES[p][1].format(a=a, b=b) for p in phases)
    summary = _SUMMARY.format(c=c)
    original_fn = f'def {name}(items):\n    """{_DOC}"""\n' + body + summary
    extra = "\n\n" + _DISTRACTOR if level == 3 else ""
    original = _HEADER + "\n\n" + original_fn + extra
    return _Drawn(tuple(phases), a, b, c, name, original)


def build(level: int, variant: str, rng: random.Random) -> RefactorSpec:
    return _make(level, variant, _draw(level, rng))


def _make(level: int, variant: str, drawn: _Drawn) -> RefactorSpec:
    count = {1: 3, 2: 4, 3: 5}[level]
    phases, a, b, c, name = drawn.phases, drawn.a, drawn.b, drawn.c, drawn.name
    module = drawn.module
    summary = _SUMMARY.format(c=c)
    doc = _DOC
    extra = "\n\n" + _DISTRACTOR if level == 3 else ""
    header = _HEADER
    original = drawn.original
    helpers = "".join(
        f"def {PHASES[p][0]}(items):\n" + PHASES[p][1].format(a=a, b=b) + "    return items\n\n\n"
        for p in phases
    )
    calls = "".join(f"    items = {PHASES[p][0]}(items)\n" for p in phases)
    reference = (
        header + "\n\n" + helpers + f"def {name}(items):\n"
        f'    """{doc}"""\n' + calls + summary + extra
    )
    before = complexity(function_defs(ast.parse(original))[name])
    after = max(complexity(f) for f in function_defs(ast.parse(reference)).values())
    bound = max(after, 4)
    # The text's limit *is* the gate's: "without adding more than N functions" lets a
    # refactoring add exactly N (the reference adds one helper per phase, N = count + 1).
    max_new = count + 1
    hidden_rng = random.Random(f"{variant}:{module}:hidden")
    hidden_calls = [(name, _inputs(hidden_rng)) for _ in range(90)]
    if level == 3:
        hidden_calls += [
            ("describe", [{"label": "mid", "total": hidden_rng.randint(0, 99)}]) for _ in range(3)
        ]
    oracle_seed = f"{variant}:{module}:oracle"
    visible_rng = random.Random(f"{variant}:{module}:visible")
    vis = [[(name, _inputs(visible_rng))] for _ in range(4)]
    test_path = f"test_{module}.py"
    tests = visible_tests(module, original, vis)
    path = f"{module}.py"
    return RefactorSpec(
        kind=KIND,
        module=module,
        variant=variant,
        level=level,
        title=f"Reduce the complexity of {name}",
        description=(
            f"`{name}` in `{path}` has cyclomatic complexity {before}. Split it into "
            f"well-named helper functions so that every function in the module has "
            f"complexity at most {bound} (McCabe: 1 + branches + boolean operands), "
            f"without adding more than {max_new} functions. `{name}` keeps its name, "
            "signature and behaviour; hidden checks compare old and new code on many "
            "inputs."
        ),
        files={path: original, test_path: tests},
        editable=(path,),
        visible_tests=(test_path,),
        visible_test_ids=test_ids(test_path, tests),
        reference={path: reference},
        checks=[[step(f"{module}:{fn}", f"{module}:{fn}", args) for fn, args in hidden_calls]],
        api=[{"module": module, "name": name, "kind": "function"}]
        + ([{"module": module, "name": "describe", "kind": "function"}] if level == 3 else []),
        structure=[
            {"req": "function_complexity", "function": name, "bound": (before + 1) // 2},
            {"req": "max_complexity", "path": path, "function": name, "bound": bound},
        ],
        integrity={"allow_star": False, "max_new_functions": max_new},
        original={path: original},
        oracle_factory=lambda: _oracle(module, name, oracle_seed),
        focus=(module, name),
    )


def drafts(level: int, module: str | None = None) -> Iterator[Draft]:
    """The specs :func:`build_all` makes (of ``module`` only, if given), not built yet:
    up to 40 variants drawn from one seeded stream, the first twelve distinct original
    modules kept (drawing and comparing originals is cheap; ``make`` builds)."""
    rng = random.Random(f"{KIND}:{level}")
    seen: set[str] = set()
    for index in range(40):
        variant = f"d{level}v{index}"
        drawn = _draw(level, rng)
        if drawn.original not in seen:
            seen.add(drawn.original)
            if module is None or drawn.module == module:
                yield drawn.module, variant, functools.partial(_make, level, variant, drawn)
        if len(seen) >= 12:
            break


def build_all(level: int) -> list[RefactorSpec]:
    return built(drafts(level))
