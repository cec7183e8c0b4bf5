"""Inputs for hidden differential checks that the task generator did not choose.

Three sources, each derived from the task's own code and the calls its checks already
make (the *observed* calls: which functions, which argument shapes):

* :func:`boundary_calls`: every numeric constant the code compares against, slices or
  bounds a ``range`` with, as ``c - 1``, ``c`` and ``c + 1`` on the argument it is
  compared with (its value, its length or one of its elements -- the parameter is
  found by a small data-flow pass; where none is found, every argument of a fitting
  type), and string constants the code compares with;
* :func:`property_calls`: hypothesis-drawn arguments whose strategies come from the
  observed argument types and ranges (widened by the code's constants), seeded and
  time-bounded;
* :func:`operation_sequences`: call sequences of varied length (to far beyond the
  generator's) for stateful code, biased so that state grows before it is queried.

Everything is deterministic for a given seed; callers record the seed and the drawn
inputs with the task. Only JSON-plain arguments are produced (the sandboxed child
receives them as JSON and its outcomes are compared by the trusted parent).
"""

from __future__ import annotations

import ast
import contextlib
import json
import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Call",
    "CodeConstants",
    "boundary_calls",
    "code_constants",
    "operation_sequences",
    "perturbed_values",
    "property_calls",
]

#: ``(function name, positional arguments)``.
Call = tuple[str, list[Any]]
#: Largest length a boundary value turns into (a string or list of that many items).
_MAX_LENGTH = 64
#: Largest magnitude of a drawn integer (observed ranges are widened, never unbounded).
_MAX_INT = 10**6


@dataclass
class CodeConstants:
    """Constants one function compares with: per parameter position (``-1``: the
    parameter could not be traced, so any fitting argument)."""

    numbers: dict[int, set[float]] = field(default_factory=dict)
    strings: dict[int, set[str]] = field(default_factory=dict)

    def all_numbers(self) -> set[float]:
        return set().union(*self.numbers.values()) if self.numbers else set()

    def all_strings(self) -> set[str]:
        return set().union(*self.strings.values()) if self.strings else set()


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value) if type(node.value) is float else int(node.value)  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return -inner if inner is not None else None
    return None


def _module_numbers(tree: ast.Module) -> dict[str, float]:
    """Module-level ``NAME = <number>`` bindings (thresholds kept in globals)."""
    out: dict[str, float] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        number = _number(value)
        if isinstance(target, ast.Name) and number is not None:
            out[target.id] = number
    return out


#: Powers ``c ** 1 .. c ** _MAX_POWER`` a local bound to ``c ** e`` stands for.
_MAX_POWER = 8
_MAX_MAGNITUDE = 10**30


def _local_numbers(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, globals_: Mapping[str, float]
) -> dict[str, set[float]]:
    """Local names bound to numbers the code spells: a constant, a module constant, a
    conditional between such (``base = 1024 if binary else 1000``) or a power of one
    (``unit = base ** i`` stands for ``base ** 1`` .. ``base ** _MAX_POWER``), so a
    comparison with the name puts its values on the boundary like a literal's."""
    assigned: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)

    def resolve(expr: ast.expr, known: Mapping[str, set[float]]) -> set[float]:
        number = _number(expr)
        if number is not None:
            return {number}
        if isinstance(expr, ast.Name):
            if expr.id in known:
                return set(known[expr.id])
            return {globals_[expr.id]} if expr.id in globals_ else set()
        if isinstance(expr, ast.IfExp):
            return resolve(expr.body, known) | resolve(expr.orelse, known)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Pow):
            return {
                c**k
                for c in resolve(expr.left, known)
                if type(c) is int and abs(c) > 1
                for k in range(1, _MAX_POWER + 1)
                if abs(c**k) <= _MAX_MAGNITUDE
            }
        return set()

    out: dict[str, set[float]] = {}
    for _ in range(3):  # chains: base = 1000; unit = base ** i
        for name, values in assigned.items():
            found = set().union(*(resolve(v, out) for v in values))
            if found:
                out[name] = found
    return out


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level functions and methods (``Class.method``) by qualified name."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{item.name}"] = item
    return out


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _origins(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, set[int]]:
    """Local name -> the parameter positions it derives from (assignments, loop
    targets, comprehension targets; iterated to a fixed point)."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    origin: dict[str, set[int]] = {p: {i} for i, p in enumerate(params)}
    flows: list[tuple[set[str], set[str]]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            targets = set().union(*(_names(t) for t in node.targets))
            flows.append((targets, _names(node.value)))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            flows.append((_names(node.target), _names(node.value)))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            flows.append((_names(node.target), _names(node.iter)))
        elif isinstance(node, ast.NamedExpr):
            flows.append((_names(node.target), _names(node.value)))
    for _ in range(8):
        changed = False
        for targets, sources in flows:
            found = set().union(*(origin.get(s, set()) for s in sources)) if sources else set()
            for t in targets:
                if not found <= origin.get(t, set()):
                    origin.setdefault(t, set()).update(found)
                    changed = True
        if not changed:
            break
    return origin


def _collect(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, globals_: Mapping[str, float], out: CodeConstants
) -> set[str]:
    """Add ``fn``'s compared constants to ``out``; return the module names it calls."""
    origin = _origins(fn)
    locals_ = _local_numbers(fn, globals_)

    def add(numbers: set[float], context: ast.AST | None) -> None:
        if not numbers:
            return
        positions = (
            set().union(*(origin.get(n, set()) for n in _names(context))) if context else set()
        )
        for p in positions or {-1}:
            out.numbers.setdefault(p, set()).update(numbers)

    def value_of(node: ast.AST) -> set[float]:
        number = _number(node)
        if number is not None:
            return {number}
        if isinstance(node, ast.Name):
            if node.id in locals_:
                return locals_[node.id]
            if node.id in globals_:
                return {globals_[node.id]}
        return set()

    calls: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, operand in enumerate(operands):
                others = [o for j, o in enumerate(operands) if j != i]
                other = ast.Tuple(elts=others, ctx=ast.Load())
                add(value_of(operand), other)
                if isinstance(operand, ast.Constant) and isinstance(operand.value, str):
                    names = _names(other)
                    positions = set().union(*(origin.get(n, set()) for n in names))
                    for p in positions or {-1}:
                        out.strings.setdefault(p, set()).add(operand.value)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            for bound in (node.slice.lower, node.slice.upper):
                if bound is not None:
                    add(value_of(bound), node.value)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "range":
                for arg in node.args:
                    add(value_of(arg), None)
            if isinstance(node.func, ast.Name):
                calls.add(node.func.id)
            for arg in node.args:
                if isinstance(arg, ast.Name) and arg.id in globals_:
                    add({globals_[arg.id]}, node)
    return calls


def code_constants(source: str) -> dict[str, CodeConstants]:
    """Per function (qualified name): the constants it, and the module functions it
    calls (transitively, attributed to any argument), compare with."""
    tree = ast.parse(source)
    globals_ = _module_numbers(tree)
    functions = _functions(tree)
    own: dict[str, CodeConstants] = {}
    calls: dict[str, set[str]] = {}
    for name, fn in functions.items():
        own[name] = CodeConstants()
        calls[name] = _collect(fn, globals_, own[name])
    out: dict[str, CodeConstants] = {}
    for name in functions:
        merged = CodeConstants(
            numbers={k: set(v) for k, v in own[name].numbers.items()},
            strings={k: set(v) for k, v in own[name].strings.items()},
        )
        seen, stack = {name}, list(calls[name])
        while stack:
            callee = stack.pop()
            if callee in seen or callee not in own:
                continue
            seen.add(callee)
            stack.extend(calls[callee])
            merged.numbers.setdefault(-1, set()).update(own[callee].all_numbers())
            merged.strings.setdefault(-1, set()).update(own[callee].all_strings())
        out[name] = merged
    return out


def _plain(value: Any) -> bool:
    try:
        return json.loads(json.dumps(value)) == value
    except (TypeError, ValueError, OverflowError):
        return False


def _key(call: Call) -> str:
    return json.dumps(call, sort_keys=True)


def _resized(value: Sequence[Any], n: int, filler: Sequence[Any]) -> Any:
    """``value`` cut or cycled to length ``n`` (a string stays a string)."""
    source = value if len(value) else filler
    if not len(source):
        return None
    items = [source[i % len(source)] for i in range(n)]
    return "".join(items) if isinstance(value, str) else items


def _shaped(value: Any, number: float, pool: Sequence[Any]) -> list[Any]:
    """Values of ``value``'s type that put ``number`` where a comparison would see it:
    the value itself, its length, or one of its elements (first and last)."""
    out: list[Any] = []
    if isinstance(value, bool) or value is None:
        return out
    if isinstance(value, int) and float(number).is_integer():
        out.append(int(number))
    elif isinstance(value, float):
        out.append(float(number))
    elif (
        isinstance(value, (str, list)) and float(number).is_integer() and 0 <= number <= _MAX_LENGTH
    ):
        filler = next((p for p in pool if type(p) is type(value) and len(p)), value)
        resized = _resized(value, int(number), filler)
        if resized is not None:
            out.append(resized)
    if isinstance(value, (list, dict)) and value:
        leaves = _numeric_leaves(value)
        chosen = {leaves[0], leaves[-1], leaves[len(leaves) // 2]} if leaves else set()
        for path in sorted(chosen):
            leaf = _at(value, path)
            if isinstance(leaf, int) and not float(number).is_integer():
                continue
            out.append(_replaced(value, path, type(leaf)(number)))
    return out


def _numeric_leaves(value: Any, depth: int = 0) -> list[tuple[Any, ...]]:
    """Paths (indices, dict keys) to the numbers inside ``value``, depth-first."""
    if isinstance(value, bool) or depth > 3:
        return []
    if isinstance(value, (int, float)):
        return [()]
    items = (
        enumerate(value)
        if isinstance(value, list)
        else value.items()
        if isinstance(value, dict)
        else ()
    )
    return [(k, *rest) for k, v in items for rest in _numeric_leaves(v, depth + 1)]


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        return [_replaced(v, rest, new) if i == head else v for i, v in enumerate(value)]
    return {k: _replaced(v, rest, new) if k == head else v for k, v in value.items()}


def _with_string(value: Any, text: str) -> list[Any]:
    if isinstance(value, str):
        out = [text, value + text, text + value]
        if value:  # the constant where the first or last character was (same length)
            out += [text + value[1:], value[:-1] + text]
        return out
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [[*value, text], [text, *value]]
    return []


def _round_robin(lists: Sequence[Sequence[Call]]) -> list[Call]:
    """The items of ``lists`` interleaved: the first of each, then the second of each..."""
    out: list[Call] = []
    for i in range(max((len(x) for x in lists), default=0)):
        out.extend(x[i] for x in lists if i < len(x))
    return out


def boundary_calls(
    source: str,
    calls: Sequence[Call],
    *,
    offsets: Sequence[int] = (-1, 0, 1),
    per_function: int = 120,
    bases: int = 2,
    seed: int | str = 0,
) -> list[Call]:
    """Calls putting each compared constant ``c`` at ``c + offset`` on the argument it
    is compared with (see the module docstring), built from ``bases`` observed calls
    per function and arity; at most ``per_function`` per function (the traced
    parameters first), none already in ``calls``."""
    constants = code_constants(source)
    rng = random.Random(f"boundary:{seed}")
    by_function: dict[str, list[list[Any]]] = {}
    for function, args in calls:
        by_function.setdefault(function, []).append(args)
    seen = {_key(c) for c in calls}
    out: list[Call] = []
    for function, observed in by_function.items():
        found = constants.get(function)
        if found is None:
            continue
        arities: dict[int, list[list[Any]]] = {}
        for args in observed:
            arities.setdefault(len(args), []).append(args)
        picked: list[list[Any]] = []
        for group in arities.values():
            unique = list({_key((function, a)): a for a in group}.values())
            picked.extend(rng.sample(unique, min(bases, len(unique))))
        # One list per observed call, merged round-robin below: the per-function cap
        # then spreads over every observed call shape instead of the first ones.
        traced_by: list[list[Call]] = []
        untraced_by: list[list[Call]] = []
        for args in picked:
            traced_one: list[Call] = []
            untraced_one: list[Call] = []
            traced_by.append(traced_one)
            untraced_by.append(untraced_one)
            for position, value in enumerate(args):
                pool = [a[position] for a in observed if len(a) > position]
                numbers = found.numbers.get(position, set())
                wide = found.numbers.get(-1, set()) - numbers
                strings = found.strings.get(position, set())
                wide_strings = found.strings.get(-1, set()) - strings
                for bucket, nums, texts in (
                    (traced_one, numbers, strings),
                    (untraced_one, wide, wide_strings),
                ):
                    for c in sorted(nums):
                        for offset in offsets:
                            for new in _shaped(value, c + offset, pool):
                                bucket.append(
                                    (function, [*args[:position], new, *args[position + 1 :]])
                                )
                    for text in sorted(texts):
                        for new in _with_string(value, text):
                            bucket.append(
                                (function, [*args[:position], new, *args[position + 1 :]])
                            )
        traced = _round_robin(traced_by)
        untraced = _round_robin(untraced_by)
        kept = 0
        for call in [*traced, *untraced]:
            key = _key(call)
            if kept >= per_function or key in seen or not _plain(call[1]):
                continue
            seen.add(key)
            out.append(call)
            kept += 1
    return out


# ------------------------------------------------------------------ property-based
def _strategy(values: Sequence[Any], numbers: Iterable[float], depth: int = 0) -> Any:
    """A hypothesis strategy for values like ``values`` (observed), widened by the
    code's ``numbers``; ``None`` when nothing fits."""
    from hypothesis import strategies as st

    numbers = sorted(n for n in numbers if abs(n) <= _MAX_INT)
    options: list[Any] = []
    if any(v is None for v in values):
        options.append(st.none())
    bools = [v for v in values if isinstance(v, bool)]
    if bools:
        options.append(st.booleans())
    ints = [v for v in values if type(v) is int]
    if ints:
        span = [*ints, *(int(n) for n in numbers if float(n).is_integer())]
        lo, hi = max(-_MAX_INT, min(span) - 3), min(_MAX_INT, max(span) + 3)
        options.append(st.integers(lo, hi) | st.sampled_from(sorted(set(ints))))
    floats = [v for v in values if type(v) is float]
    if floats:
        span_f = [*floats, *numbers]
        lo_f, hi_f = min(span_f) - 3.0, max(span_f) + 3.0
        options.append(
            st.floats(lo_f, hi_f, allow_nan=False, allow_infinity=False).map(lambda x: round(x, 3))
            | st.sampled_from(sorted(set(floats)))
        )
    texts = [v for v in values if isinstance(v, str)]
    if texts:
        alphabet = sorted(set("".join(texts))) or list("ab ")
        longest = min(_MAX_LENGTH, max(len(t) for t in texts) + 4)
        options.append(
            st.text(alphabet=st.sampled_from(alphabet), max_size=longest)
            | st.sampled_from(sorted(set(texts)))
        )
    lists = [v for v in values if isinstance(v, list)]
    if lists and depth < 3:
        items = [item for v in lists for item in v]
        inner = _strategy(items, numbers, depth + 1) if items else None
        longest = min(_MAX_LENGTH, max(len(v) for v in lists) + 3)
        if inner is not None:
            options.append(st.lists(inner, max_size=longest))
    dicts = [v for v in values if isinstance(v, dict)]
    if dicts and depth < 3:
        keys = [k for d in dicts for k in d]
        vals = [x for d in dicts for x in d.values()]
        key_s = _strategy(keys, (), depth + 1) if keys else None
        val_s = _strategy(vals, numbers, depth + 1) if vals else None
        if key_s is not None and val_s is not None:
            longest = min(16, max(len(d) for d in dicts) + 2)
            options.append(st.dictionaries(key_s, val_s, max_size=longest))
    if not options:
        return None
    return st.one_of(options)


def property_calls(
    source: str,
    calls: Sequence[Call],
    *,
    seed: int,
    per_function: int = 40,
    time_budget_s: float = 2.0,
) -> list[Call]:
    """Up to ``per_function`` hypothesis-drawn calls per function (argument strategies
    from the observed calls, per arity; :func:`_strategy`), drawn under ``seed`` with
    no example database, within ``time_budget_s`` of wall time in all."""
    constants = code_constants(source)
    by_function: dict[str, list[list[Any]]] = {}
    for function, args in calls:
        by_function.setdefault(function, []).append(args)
    seen = {_key(c) for c in calls}
    out: list[Call] = []
    share = time_budget_s / max(1, len(by_function))
    for index, (function, observed) in enumerate(sorted(by_function.items())):
        # Each function gets its share of the budget (a slow one cannot starve the rest).
        deadline = time.monotonic() + share
        found = constants.get(function, CodeConstants())
        arities = sorted({len(a) for a in observed})
        per_arity = max(1, per_function // len(arities))
        for arity in arities:
            group = [a for a in observed if len(a) == arity]
            strategies = []
            for position in range(arity):
                strategy = _strategy(
                    [a[position] for a in group],
                    found.numbers.get(position, set()) | found.numbers.get(-1, set()),
                )
                if strategy is None:
                    break
                strategies.append(strategy)
            else:
                drawn = _draw(
                    strategies, per_arity * 3, deadline, hash_seed(seed, function, arity, index)
                )
                kept = 0
                for args in drawn:
                    call = (function, args)
                    key = _key(call)
                    if kept >= per_arity or key in seen or not _plain(args):
                        continue
                    seen.add(key)
                    out.append(call)
                    kept += 1
    return out


class _Enough(Exception):
    """Raised inside a hypothesis run to end it (enough draws, or out of time)."""


def _draw(strategies: list[Any], n: int, deadline: float, seed: int) -> list[list[Any]]:
    """Up to ``n`` argument lists drawn from ``strategies`` (one per position) under
    ``seed``, until ``deadline`` (``time.monotonic``)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    drawn: list[list[Any]] = []

    @settings(
        max_examples=n + 1,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.tuples(*strategies))
    def collect(args: tuple[Any, ...]) -> None:
        if len(drawn) >= n or time.monotonic() >= deadline:
            # Hypothesis would go on generating to max_examples: stop it.
            raise _Enough
        drawn.append(list(args))

    with contextlib.suppress(_Enough):
        hypothesis_seed(seed)(collect)()
    return drawn


def hash_seed(*parts: Any) -> int:
    """A stable 32-bit seed from ``parts`` (``hash()`` of strings varies per process)."""
    import hashlib

    return int(hashlib.sha256(repr(parts).encode()).hexdigest()[:8], 16)


# ------------------------------------------------------------------ sequences
def operation_sequences(
    calls: Sequence[Call],
    *,
    seed: int | str,
    lengths: Sequence[int] = (2, 6, 12, 20, 32, 48, 64),
    per_length: int = 2,
) -> list[list[Call]]:
    """Call sequences of the given lengths over the observed calls' functions and
    arguments: per length one sequence with the functions' observed frequencies and
    (``per_length`` > 1) ones where a single function, in turn, dominates 4:1, so that
    state grows long before it is queried."""
    rng = random.Random(f"sequences:{seed}")
    pool: dict[str, list[list[Any]]] = {}
    for function, args in calls:
        pool.setdefault(function, []).append(args)
    functions = sorted(pool)
    if not functions:
        return []
    counts = [len(pool[f]) for f in functions]
    out: list[list[Call]] = []
    turn = 0
    for length in lengths:
        for variant in range(per_length):
            if variant == 0:
                weights = counts
            else:
                heavy = functions[turn % len(functions)]
                turn += 1
                weights = [
                    4 * sum(counts) if f == heavy else c
                    for f, c in zip(functions, counts, strict=True)
                ]
            chosen = rng.choices(functions, weights=weights, k=length)
            out.append([(f, list(rng.choice(pool[f]))) for f in chosen])
    return out


def perturbed_values(value: Any) -> list[Any]:
    """Boundary and perturbed values of one argument (JSON-plain, or tagged as
    :mod:`forgegym.tasklib.probe` encodes tuples and bytes): an int's neighbours, zero
    and negation, a string emptied, cut, doubled, upper-cased or indented, a list
    emptied, cut or reversed (one may equal ``value``: callers drop repeats)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        return [value + 1, value - 1, 0, -value]
    if isinstance(value, float):
        return [value * 2, -value, 0.0, value + 0.5]
    if isinstance(value, str):
        out = ["", value[1:], value[:-1], value + value, value.upper(), " " + value]
        return [v for v in out if v != value]
    if isinstance(value, list):
        return [[], value[:-1], value[::-1]] if value else []
    if isinstance(value, dict) and set(value) == {"$tuple"}:
        items: list[Any] = value["$tuple"]
        cuts: list[list[Any]] = [[], items[:-1], items[::-1]]
        return [{"$tuple": v} for v in cuts] if items else []
    if isinstance(value, dict) and set(value) == {"$bytes"}:
        text = value["$bytes"]
        return [{"$bytes": ""}, {"$bytes": text[:-2]}, {"$bytes": text + text}] if text else []
    return []
