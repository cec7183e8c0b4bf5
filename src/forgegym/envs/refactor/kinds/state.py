"""Replace module-level mutable state with an explicit object behind the same functions.

Template modules keep their state in module globals (dicts, lists, counters changed
with ``global``). The refactoring moves the state into a class (name given by the task)
whose methods hold the logic, with one module-level default instance that the old
functions delegate to, so every caller keeps working. Hidden checks run random call
sequences, each from a fresh import.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from forgegym.envs.refactor.kinds.common import Draft, built, test_ids
from forgegym.envs.refactor.kinds.visible import visible_tests
from forgegym.envs.refactor.spec import RefactorSpec, step

__all__ = ["TEMPLATES", "build", "build_all", "drafts"]

KIND = "state_to_object"


@dataclass(frozen=True)
class Template:
    """A stateful module: its globals, functions (source with ``{g}`` for the global
    prefix) and a random call generator."""

    name: str
    doc: str
    state: tuple[tuple[str, str], ...]  # (global name, initial value source)
    functions: tuple[tuple[str, str, str], ...]  # (name, params, body using state names)
    classes: tuple[str, ...]

    def call(self, rng: random.Random, fn: str) -> list[Any]:
        keys = ["alpha", "beta", "gamma", "delta"]
        if self.name == "tally":
            if fn == "record":
                return [rng.choice(keys), rng.choice([1, 2, 5, -1, 0])]
            if fn == "top":
                return [rng.randint(0, 3)]
            if fn == "count_of":
                return [rng.choice(keys)]
            return []
        if self.name == "history":
            if fn == "push":
                return [rng.choice(keys + ["x", "y"])]
            return []
        if self.name == "allocator":
            if fn in ("allocate", "lookup", "release"):
                return [rng.choice(keys)]
            return []
        raise AssertionError(self.name)


TEMPLATES: dict[str, Template] = {
    "tally": Template(
        name="tally",
        doc="Counting named events.",
        state=(("_counts", "{}"),),
        functions=(
            (
                "record",
                "name, amount=1",
                "    if amount < 0:\n"
                '        raise ValueError("amount must not be negative")\n'
                "    _counts[name] = _counts.get(name, 0) + amount\n"
                "    return _counts[name]\n",
            ),
            ("count_of", "name", "    return _counts.get(name, 0)\n"),
            ("total", "", "    return sum(_counts.values())\n"),
            (
                "top",
                "n=1",
                "    ranked = sorted(_counts.items(), key=lambda kv: (-kv[1], kv[0]))\n"
                "    return [name for name, _ in ranked[:n]]\n",
            ),
            ("reset", "", "    _counts.clear()\n"),
        ),
        classes=("Tally", "EventCounter", "Ledger"),
    ),
    "history": Template(
        name="history",
        doc="An undo/redo history of edits.",
        state=(("_done", "[]"), ("_undone", "[]")),
        functions=(
            (
                "push",
                "item",
                "    _done.append(item)\n    _undone.clear()\n    return len(_done)\n",
            ),
            (
                "undo",
                "",
                "    if not _done:\n"
                '        raise IndexError("nothing to undo")\n'
                "    item = _done.pop()\n"
                "    _undone.append(item)\n"
                "    return item\n",
            ),
            (
                "redo",
                "",
                "    if not _undone:\n"
                '        raise IndexError("nothing to redo")\n'
                "    item = _undone.pop()\n"
                "    _done.append(item)\n"
                "    return item\n",
            ),
            ("current", "", "    return _done[-1] if _done else None\n"),
            ("size", "", "    return len(_done), len(_undone)\n"),
        ),
        classes=("History", "UndoStack", "EditLog"),
    ),
    "allocator": Template(
        name="allocator",
        doc="Allocating small integer ids to names.",
        state=(("_ids", "{}"), ("_next_id", "1")),
        functions=(
            (
                "allocate",
                "name",
                "    global _next_id\n"
                "    if name in _ids:\n"
                "        return _ids[name]\n"
                "    _ids[name] = _next_id\n"
                "    _next_id += 1\n"
                "    return _ids[name]\n",
            ),
            (
                "lookup",
                "name",
                "    if name not in _ids:\n        raise KeyError(name)\n    return _ids[name]\n",
            ),
            ("release", "name", "    return _ids.pop(name, None)\n"),
            ("count", "", "    return len(_ids)\n"),
            ("issued", "", "    return _next_id - 1\n"),
        ),
        classes=("Allocator", "IdRegistry", "IdPool"),
    ),
}


def _original(template: Template, functions: list[tuple[str, str, str]]) -> str:
    state = "".join(f"{name} = {value}\n" for name, value in template.state)
    funcs = "".join(f"\n\ndef {n}({p}):\n{b}" for n, p, b in functions)
    return f'"""{template.doc}"""\n\n{state}' + funcs


def _reference(template: Template, functions: list[tuple[str, str, str]], cls: str) -> str:
    init = "".join(f"        self.{name[1:]} = {value}\n" for name, value in template.state)
    methods = ""
    for n, p, b in functions:
        body = b.replace("    global _next_id\n", "")
        for name, _ in template.state:
            body = re.sub(rf"(?<![\w.]){re.escape(name)}\b", f"self.{name[1:]}", body)
        body = "".join(
            "    " + line if line.strip() else line for line in body.splitlines(keepends=True)
        )
        params = f"self, {p}" if p else "self"
        methods += f"\n    def {n}({params}):\n{body}"
    wrappers = ""
    for n, p, _ in functions:
        args = ", ".join(part.split("=")[0].strip() for part in p.split(",") if part.strip())
        wrappers += f"\n\ndef {n}({p}):\n    return _default.{n}({args})\n"
    return (
        f'"""{template.doc}"""\n\n\n'
        f"class {cls}:\n"
        f'    """The state and operations, one instance per independent {template.name}."""\n\n'
        f"    def __init__(self):\n{init}{methods}\n\n"
        f"_default = {cls}()\n" + wrappers
    )


def _oracle(
    template: Template, module: str, names: list[str], seed: str
) -> list[list[dict[str, Any]]]:
    rng = random.Random(seed)
    return [
        [
            {"t": f"{module}:{fn}", "a": template.call(rng, fn)}
            for fn in rng.choices(names, k=rng.randint(3, 12))
        ]
        for _ in range(60)
    ]


def _draw(
    template: Template, level: int, rng: random.Random
) -> tuple[list[tuple[str, str, str]], str, str]:
    """All one variant takes from ``rng`` (functions and class) and its reference."""
    count = {1: 3, 2: 4, 3: 5}[level]
    first = template.functions[0]
    rest = rng.sample(template.functions[1:], count - 1)
    functions = [first, *sorted(rest, key=template.functions.index)]
    cls = rng.choice(template.classes)
    return functions, cls, _reference(template, functions, cls)


def _module(template: Template, level: int) -> str:
    return f"{template.name}_state" if level < 3 else f"{template.name}_store"


def build(template: Template, level: int, variant: str, rng: random.Random) -> RefactorSpec:
    return _make(template, level, variant, *_draw(template, level, rng))


def _make(
    template: Template,
    level: int,
    variant: str,
    functions: list[tuple[str, str, str]],
    cls: str,
    reference: str,
) -> RefactorSpec:
    module = _module(template, level)
    path = f"{module}.py"
    original = _original(template, functions)
    names = [n for n, _, _ in functions]
    hidden_rng = random.Random(f"{variant}:{module}:hidden")
    sequences = [
        [
            (rng_fn, template.call(hidden_rng, rng_fn))
            for rng_fn in hidden_rng.choices(
                names, weights=[3] + [1] * (len(names) - 1), k=hidden_rng.randint(3, 9)
            )
        ]
        for _ in range(24)
    ]
    oracle_seed = f"{variant}:{module}:oracle"
    visible_rng = random.Random(f"{variant}:{module}:visible")
    vis = [
        [
            (fn, template.call(visible_rng, fn))
            for fn in [names[0], names[0], *visible_rng.sample(names, 2)]
        ]
        for _ in range(3)
    ]
    test_path = f"test_{module}.py"
    tests = visible_tests(module, original, vis)
    methods = names
    return RefactorSpec(
        kind=KIND,
        module=module,
        variant=variant,
        level=level,
        title=f"Move the module state of {path} into a {cls} object",
        description=(
            f"`{path}` keeps its state in module globals "
            f"({', '.join(f'`{n}`' for n, _ in template.state)}). Move the state and the "
            f"logic into a class `{cls}` (state set in `__init__`, one method per "
            f"function: {', '.join(f'`{n}`' for n in names)}), create one module-level "
            f"default instance, and keep every module-level function working by "
            "delegating to it. No `global` statements and no module-level dicts, lists or "
            "sets may remain. Behaviour must not change; hidden checks replay call "
            "sequences against the old and new code."
        ),
        files={path: original, test_path: tests},
        editable=(path,),
        visible_tests=(test_path,),
        visible_test_ids=test_ids(test_path, tests),
        reference={path: reference},
        checks=[
            [step(f"{module}:{fn}", f"{module}:{fn}", args) for fn, args in seq]
            for seq in sequences
        ],
        api=[{"module": module, "name": n, "kind": "function"} for n in names],
        structure=[  # type: ignore[arg-type]
            {"req": "class_defined", "path": path, "name": cls, "methods": methods},
            {"req": "no_module_mutable", "path": path},
        ]
        + ([{"req": "no_global", "path": path}] if "global " in original else []),
        integrity={"allow_star": False, "max_new_functions": 1},
        original={path: original},
        oracle_factory=lambda: _oracle(template, module, names, oracle_seed),
        focus=(module, cls, *names),
    )


def drafts(level: int, module: str | None = None) -> Iterator[Draft]:
    """The specs :func:`build_all` makes (of ``module`` only, if given), not built yet:
    per template up to 12 variants drawn from one seeded stream, the first five distinct
    references kept (drawing and comparing references is cheap; ``make`` builds)."""
    for template in TEMPLATES.values():
        name = _module(template, level)
        if module is not None and name != module:
            continue
        rng = random.Random(f"{KIND}:{template.name}:{level}")
        seen: set[str] = set()
        for index in range(12):
            variant = f"d{level}v{index}"
            functions, cls, reference = _draw(template, level, rng)
            if reference not in seen:
                seen.add(reference)
                make = functools.partial(_make, template, level, variant, functions, cls, reference)
                yield name, variant, make
            if len(seen) >= 5:
                break


def build_all(level: int) -> list[RefactorSpec]:
    return built(drafts(level))
