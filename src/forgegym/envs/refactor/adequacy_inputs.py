"""The structured adequacy inputs of :data:`.adequacy.STRUCTURED_KINDS` (issue #37),
derived from an original's code and the calls its checks make: aggregate and length
boundaries for list-of-number arguments, the output-boundary pool and its selection,
calls leaning on parameter defaults, and block sequences for stateful modules. Pure
functions (no sandbox); :mod:`.adequacy` draws and runs them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from forgegym.tasklib import inputs

__all__ = [
    "BLOCK",
    "MAX_LENGTH",
    "aggregate_boundary_calls",
    "aggregate_pool",
    "block_sequences",
    "default_arity_calls",
    "dense_calls",
    "folded_numbers",
    "number_lists",
    "select_by_output",
]

#: Longest list an aggregate boundary call builds to put a list's length at a number.
MAX_LENGTH = 24
#: Run length of a block sequence (three pushes, three pops, ...).
BLOCK = 3


def default_arity_calls(
    source: str, observed: Sequence[inputs.Call], *, per_function: int = 8
) -> list[inputs.Call]:
    """Observed calls with trailing arguments left out where the parameter has a
    default (each shorter arity that still fills every required parameter; at most
    ``per_function`` distinct calls per function and arity): a changed default only
    shows on a call that leans on it, and the kinds' own calls pass every argument."""
    import ast

    required: dict[str, tuple[int, int]] = {}  # name -> (required count, positional count)
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.args.defaults:
            positional = [*node.args.posonlyargs, *node.args.args]
            required[node.name] = (len(positional) - len(node.args.defaults), len(positional))
    out: dict[str, inputs.Call] = {}
    counts: dict[tuple[str, int], int] = {}
    for function, args in observed:
        if function not in required:
            continue
        least, most = required[function]
        for arity in range(least, min(len(args), most)):
            key = json.dumps([function, args[:arity]], sort_keys=True)
            if key in out or counts.get((function, arity), 0) >= per_function:
                continue
            counts[(function, arity)] = counts.get((function, arity), 0) + 1
            out[key] = (function, list(args[:arity]))
    return list(out.values())


def folded_numbers(source: str) -> list[int]:
    """The integers the code spells: literals and constant expressions (``57 // 2``,
    ``-3``, ``LIMIT * 2`` with ``LIMIT`` a module constant), sorted."""
    import ast

    tree = ast.parse(source)
    names: dict[str, Any] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and type(node.value.value) in (int, float)
        ):
            names[node.targets[0].id] = node.value.value
    found: set[int] = set()

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = value(node.operand)
            return None if inner is None else -inner
        if isinstance(node, ast.BinOp) and isinstance(
            node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)
        ):
            left, right = value(node.left), value(node.right)
            if left is None or right is None or (isinstance(node.op, ast.FloorDiv) and not right):
                return None
            ops: dict[type, Callable[[Any, Any], Any]] = {
                ast.Add: lambda a, b: a + b,
                ast.Sub: lambda a, b: a - b,
                ast.Mult: lambda a, b: a * b,
                ast.FloorDiv: lambda a, b: a // b,
            }
            return ops[type(node.op)](left, right)
        return None

    for sub in ast.walk(tree):
        if isinstance(sub, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Name)):
            v = value(sub)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) <= 10**6:
                found.add(int(v))
    return sorted(found)


def number_lists(observed: Sequence[inputs.Call]) -> dict[str, list[tuple[int, list[Any]]]]:
    """Per function: the positions of its observed arguments that are lists of numbers
    (``None`` items allowed), with one observed call to vary."""
    out: dict[str, list[tuple[int, list[Any]]]] = {}
    seen: set[tuple[str, int]] = set()
    for function, args in observed:
        for position, arg in enumerate(args):
            if (
                isinstance(arg, list)
                and arg
                and all(x is None or (type(x) in (int, float)) for x in arg)
                and (function, position) not in seen
            ):
                seen.add((function, position))
                out.setdefault(function, []).append((position, list(args)))
    return out


def aggregate_boundary_calls(
    source: str, observed: Sequence[inputs.Call], *, fuzz: bool = False
) -> list[inputs.Call]:
    """Calls whose list-of-numbers argument puts a total or an element at each number
    ``c`` the code spells (``c - 1``, ``c``, ``c + 1``; ``fuzz``: also ``c +- 2``): the
    lists ``[t]``, ``[t - 1, 1]``, ``[t, t]`` and ``[1] * t``-like splits into up to
    three parts, so a threshold on a sum, a mean, a maximum or a single reading is hit
    whatever the code derives from the list. Non-negative targets only (the lists keep
    the observed element type: ints); and for each such number up to
    :data:`MAX_LENGTH`, lists of that many distinct items (rising, falling, and with a
    missing and a negative reading), so a cap on the length is hit as well."""
    offsets = (-2, -1, 0, 1, 2) if fuzz else (-1, 0, 1)
    targets = sorted(
        {c + d for c in folded_numbers(source) for d in offsets if 0 <= c + d <= 10_000}
    )
    calls: list[inputs.Call] = []
    for function, slots in sorted(number_lists(observed).items()):
        for position, args in slots:
            for t in targets:
                shapes: list[list[Any]] = [
                    [t],
                    [t, t],
                    [max(0, t - 1), 1],
                    [t // 3, t // 3, t - 2 * (t // 3)],
                ]
                if 2 <= t <= MAX_LENGTH:
                    # A list *length* at the number: distinct items (a de-duplicating
                    # phase keeps them all), rising and falling (an ordering phase
                    # takes either branch), so a length cap's edge is reached.
                    rising: list[Any] = [3 * i + 1 for i in range(t)]
                    shapes += [rising, rising[::-1], [*rising[1:], None, -2]]
                for shape in shapes:
                    new = list(args)
                    new[position] = shape
                    calls.append((function, new))
    unique: dict[str, inputs.Call] = {}
    for call in calls:
        unique.setdefault(json.dumps(call, sort_keys=True), call)
    return list(unique.values())


def aggregate_pool(
    source: str, observed: Sequence[inputs.Call], *, seed: str, size: int = 600
) -> list[inputs.Call]:
    """A pool of list-of-numbers calls to run on the original and select from by their
    outputs (:func:`select_by_output`): lists of varied length (1 to 12) and values
    (negative, small, around and up to twice each number the code spells, repeats and
    ``None``), seeded; first every one-item list from ``-3`` to that top and as many
    seeded pairs (a total the phases derive from one or two readings lands on every
    value, not only on those a random list happens to hit)."""
    import random

    rng = random.Random(f"aggregate-pool:{seed}")
    numbers = [n for n in folded_numbers(source) if n > 0] or [10]
    top = 2 * max(numbers) + 2
    slots = number_lists(observed)
    calls: list[inputs.Call] = []
    for function, positions in sorted(slots.items()):
        for position, args in positions:
            values: list[Any]
            small: list[list[Any]] = [[v] for v in range(-3, top + 1)]
            small += [[rng.randint(-3, top), rng.randint(0, top)] for _ in range(top + 4)]
            for values in small:
                new = list(args)
                new[position] = values
                calls.append((function, new))
            for _ in range(size):
                length = rng.randint(1, 12)
                values = []
                for _ in range(length):
                    roll = rng.random()
                    if roll < 0.05:
                        values.append(None)
                    elif roll < 0.15:
                        values.append(-rng.randint(1, top // 2))
                    elif roll < 0.45:
                        values.append(rng.randint(0, 12))
                    else:
                        values.append(rng.randint(0, top))
                new = list(args)
                new[position] = values
                calls.append((function, new))
    return calls


def select_by_output(
    source: str,
    calls: Sequence[inputs.Call],
    outcomes: Sequence[Mapping[str, Any]],
    *,
    per_value: int = 3,
) -> list[inputs.Call]:
    """The calls of a pool whose output holds a number at ``c - 1``, ``c`` or ``c + 1``
    for a number ``c`` the code spells (at most ``per_value`` per output number): the
    inputs that put a value the code derives (a total after cleaning and scaling, a
    count) on a threshold, which no input-side rule can aim at."""
    targets = {c + d for c in folded_numbers(source) for d in (-1, 0, 1)}
    # The quota is per *place* of the output (list positions folded) and value: a total
    # on its threshold is not crowded out by list items that happen to equal it.
    taken: dict[tuple[Any, ...], int] = {}
    chosen: list[inputs.Call] = []
    for call, outcome in zip(calls, outcomes, strict=True):
        if "v" not in outcome:
            continue
        value = outcome["v"]
        hits = {
            (tuple("*" if isinstance(k, int) else k for k in path), _at_path(value, path))
            for path in inputs._numeric_leaves(value)
            if _at_path(value, path) in targets
        }
        fresh = sorted((h for h in hits if taken.get(h, 0) < per_value), key=repr)
        if fresh:
            for h in fresh:
                taken[h] = taken.get(h, 0) + 1
            chosen.append(call)
    return chosen


def _at_path(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def block_sequences(observed: Sequence[inputs.Call], *, seed: str) -> list[list[inputs.Call]]:
    """Stateful sequences in runs: for each ordered pair and triple of the observed
    functions, each called :data:`BLOCK` times in a row (arguments drawn from its
    observed ones), then every function once. A change of order inside the state (a
    stack read as a queue, an insert at the other end) needs two items in and two out
    to show; random sequences dominated by one function rarely have them."""
    import itertools
    import random

    rng = random.Random(f"blocks:{seed}")
    pool: dict[str, list[list[Any]]] = {}
    for function, args in observed:
        distinct = pool.setdefault(function, [])
        if list(args) not in distinct:  # a run of equal items hides any reordering
            distinct.append(list(args))
    functions = sorted(pool)

    def run(function: str) -> list[inputs.Call]:
        args = pool[function]
        picked = rng.sample(args, min(BLOCK, len(args)))
        return [(function, list(picked[i % len(picked)])) for i in range(BLOCK)]

    out: list[list[inputs.Call]] = []
    orders = [
        *itertools.permutations(functions, 2),
        *itertools.permutations(functions, 3),
    ]
    for order in orders:
        seq: list[inputs.Call] = []
        for function in order:
            seq.extend(run(function))
        seq.extend((function, list(rng.choice(pool[function]))) for function in functions)
        out.append(seq)
    return out


def dense_calls(
    observed: Sequence[inputs.Call], *, seed: str, per_slot: int = 80
) -> list[inputs.Call]:
    """Per list-of-numbers argument, ``per_slot`` seeded lists of 4 to 14 readings
    drawn densely from ``-4..8`` (and ``None``): values collide after cleaning (a
    negative reading mapped onto a positive one), repeat and tie, so that phases run in
    another order (de-duplicate before cleaning, cap before de-duplicating) give another
    result. The kinds' own lists mostly miss these collisions (a third ``None``, a third
    ``0``, the rest spread over a wide range)."""
    import random

    rng = random.Random(f"dense:{seed}")
    calls: list[inputs.Call] = []
    for function, slots in sorted(number_lists(observed).items()):
        for position, args in slots:
            for _ in range(per_slot):
                values: list[Any] = [
                    None if rng.random() < 0.08 else rng.randint(-4, 8)
                    for _ in range(rng.randint(4, 14))
                ]
                new = list(args)
                new[position] = values
                calls.append((function, new))
    return calls
