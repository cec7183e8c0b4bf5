"""An independent mutation operator set, for *measuring* the adequacy of hidden checks.

The task generators inject bugs with their own engine (Bugfix's libcst operators, on the
first comparison of a chain, in public top-level functions only). Checks tuned against
those mutants say little about mutants nobody tuned them to, so adequacy is measured
with this second set, written apart from the generators and never used by them:

* ``relational``: every comparison operator of a chain (``<`` / ``<=``, ``>`` / ``>=``,
  both ways, and ``==`` -> ``<=`` / ``>=``), the edge a boundary bug moves;
* ``constant``: every integer and float constant ``-1`` and ``+1`` (module-level
  thresholds included);
* ``order``: container order -- ``pop()`` <-> ``pop(0)``, ``append(x)`` ->
  ``insert(0, x)``, ``[-1]`` <-> ``[0]``, ``sorted(..., reverse=...)`` toggled;
* ``default``: a parameter default changed (numbers +-1, booleans flipped, ``None`` ->
  ``0``, strings emptied);
* ``swap``: two positional call arguments exchanged, and the operands of a
  non-commutative binary operation or comparison exchanged;
* ``drop_else``: an ``else`` (or ``elif``) branch dropped, and ``a if c else b`` -> ``a``.

Sites are every matching node of the module in :func:`ast.walk` order (methods, private
helpers, lambdas and module-level code included). A mutant is the module rewritten with
:func:`ast.unparse`: comments and layout go, behaviour is all that matters.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["OPERATOR_NAMES", "Mutant", "Site", "enumerate_sites", "mutants", "apply_site"]

_RELATIONAL: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Lt: (ast.LtE,),
    ast.LtE: (ast.Lt,),
    ast.Gt: (ast.GtE,),
    ast.GtE: (ast.Gt,),
    ast.Eq: (ast.LtE, ast.GtE),
}
_NON_COMMUTATIVE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)


@dataclass(frozen=True, order=True)
class Site:
    """One mutation: ``operator``'s ``variant`` at the ``index``-th matching node."""

    operator: str
    index: int
    variant: int = 0

    def label(self) -> str:
        return f"{self.operator}#{self.index}.{self.variant}"


@dataclass(frozen=True)
class Mutant:
    """A mutated module: where it was mutated, a one-line description and the code."""

    site: Site
    description: str
    source: str


def _docstring_nodes(tree: ast.AST) -> set[int]:
    """``id`` of every docstring constant (not behaviour)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                out.add(id(body[0].value))
    return out


def _is_number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and type(node.value) in (int, float)
        and not isinstance(node.value, bool)
    )


def _method_call(node: ast.AST, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
        and not node.keywords
    )


# Each operator: (node) -> list of (description, mutate(node) -> replacement node).
Variant = tuple[str, Callable[[ast.AST], ast.AST | None]]


def _relational(node: ast.AST) -> list[Variant]:
    if not isinstance(node, ast.Compare):
        return []
    out: list[Variant] = []
    for position, op in enumerate(node.ops):
        for new in _RELATIONAL.get(type(op), ()):

            def mutate(n: ast.AST, p: int = position, new_op: type[ast.cmpop] = new) -> ast.AST:
                assert isinstance(n, ast.Compare)
                n.ops[p] = new_op()
                return n

            out.append((f"{type(op).__name__} -> {new.__name__} (comparison {position})", mutate))
    return out


def _constant(node: ast.AST) -> list[Variant]:
    if not _is_number(node):
        return []
    assert isinstance(node, ast.Constant)
    value = node.value
    out: list[Variant] = []
    for delta in (-1, 1):

        def mutate(n: ast.AST, d: int = delta) -> ast.AST:
            assert isinstance(n, ast.Constant) and isinstance(n.value, (int, float))
            return ast.Constant(n.value + d)

        out.append((f"constant {value!r} {delta:+d}", mutate))
    return out


def _order(node: ast.AST) -> list[Variant]:
    out: list[Variant] = []
    if _method_call(node, "pop"):
        assert isinstance(node, ast.Call)
        if not node.args:

            def to_front(n: ast.AST) -> ast.AST:
                assert isinstance(n, ast.Call)
                n.args = [ast.Constant(0)]
                return n

            out.append(("pop() -> pop(0)", to_front))
        elif (
            len(node.args) == 1
            and isinstance(node.args[0], ast.Constant)
            and (node.args[0].value == 0)
        ):

            def to_back(n: ast.AST) -> ast.AST:
                assert isinstance(n, ast.Call)
                n.args = []
                return n

            out.append(("pop(0) -> pop()", to_back))
    if _method_call(node, "append"):
        assert isinstance(node, ast.Call)
        if len(node.args) == 1:

            def to_insert(n: ast.AST) -> ast.AST:
                assert isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                n.func.attr = "insert"
                n.args = [ast.Constant(0), n.args[0]]
                return n

            out.append(("append(x) -> insert(0, x)", to_insert))
    if _method_call(node, "popleft") or _method_call(node, "appendleft"):
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        other = {"popleft": "pop", "appendleft": "append"}[node.func.attr]

        def to_right(n: ast.AST, name: str = other) -> ast.AST:
            assert isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            n.func.attr = name
            return n

        out.append((f"{node.func.attr} -> {other}", to_right))
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        index = node.slice
        if isinstance(index, ast.Constant) and index.value == 0:
            out.append(("[0] -> [-1]", lambda n: _with_index(n, -1)))
        elif (
            isinstance(index, ast.UnaryOp)
            and isinstance(index.op, ast.USub)
            and isinstance(index.operand, ast.Constant)
            and index.operand.value == 1
        ):
            out.append(("[-1] -> [0]", lambda n: _with_index(n, 0)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sorted":
        out.append(("sorted reverse toggled", _toggle_reverse))
    return out


def _with_index(node: ast.AST, value: int) -> ast.AST:
    assert isinstance(node, ast.Subscript)
    node.slice = ast.Constant(value) if value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(1))
    return node


def _toggle_reverse(node: ast.AST) -> ast.AST:
    assert isinstance(node, ast.Call)
    for keyword in node.keywords:
        if keyword.arg == "reverse":
            keyword.value = ast.UnaryOp(ast.Not(), keyword.value)
            return node
    node.keywords.append(ast.keyword("reverse", ast.Constant(True)))
    return node


def _default(node: ast.AST) -> list[Variant]:
    if not isinstance(node, ast.arguments):
        return []
    out: list[Variant] = []
    defaults = [("pos", i, d) for i, d in enumerate(node.defaults)]
    defaults += [("kw", i, d) for i, d in enumerate(node.kw_defaults) if d is not None]
    for where, index, value in defaults:
        if not isinstance(value, ast.Constant):
            continue
        v = value.value
        replacements: list[bool | int | float | str | None]
        if isinstance(v, bool):
            replacements = [not v]
        elif isinstance(v, (int, float)):
            replacements = [v - 1, v + 1]
        elif v is None:
            replacements = [0]
        elif isinstance(v, str):
            replacements = ["" if v else " "]
        else:
            continue
        for new in replacements:

            def mutate(
                n: ast.AST, w: str = where, i: int = index, r: bool | float | str | None = new
            ) -> ast.AST:
                assert isinstance(n, ast.arguments)
                target = n.defaults if w == "pos" else n.kw_defaults
                target[i] = ast.Constant(r)
                return n

            out.append((f"default {v!r} -> {new!r}", mutate))
    return out


def _swap(node: ast.AST) -> list[Variant]:
    out: list[Variant] = []
    if isinstance(node, ast.Call):
        plain = [i for i, a in enumerate(node.args) if not isinstance(a, ast.Starred)]
        for left, right in zip(plain, plain[1:], strict=False):
            if right != left + 1 or ast.dump(node.args[left]) == ast.dump(node.args[right]):
                continue

            def mutate(n: ast.AST, i: int = left) -> ast.AST:
                assert isinstance(n, ast.Call)
                n.args[i], n.args[i + 1] = n.args[i + 1], n.args[i]
                return n

            out.append((f"call arguments {left} and {left + 1} swapped", mutate))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, _NON_COMMUTATIVE):
        if ast.dump(node.left) != ast.dump(node.right):

            def operands(n: ast.AST) -> ast.AST:
                assert isinstance(n, ast.BinOp)
                n.left, n.right = n.right, n.left
                return n

            out.append((f"operands of {type(node.op).__name__} swapped", operands))
    elif (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE))
    ):

        def compared(n: ast.AST) -> ast.AST:
            assert isinstance(n, ast.Compare)
            n.left, n.comparators[0] = n.comparators[0], n.left
            return n

        out.append(("compared operands swapped", compared))
    return out


def _drop_else(node: ast.AST) -> list[Variant]:
    if isinstance(node, ast.If) and node.orelse:

        def mutate(n: ast.AST) -> ast.AST:
            assert isinstance(n, ast.If)
            n.orelse = []
            return n

        kind = "elif" if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) else "else"
        return [(f"{kind} branch dropped", mutate)]
    if isinstance(node, ast.IfExp):
        return [("conditional expression keeps its first branch", lambda n: n.body)]  # type: ignore[attr-defined]
    return []


_OPERATORS: dict[str, Callable[[ast.AST], list[Variant]]] = {
    "relational": _relational,
    "constant": _constant,
    "order": _order,
    "default": _default,
    "swap": _swap,
    "drop_else": _drop_else,
}
#: The operator names, in a fixed order.
OPERATOR_NAMES: tuple[str, ...] = tuple(_OPERATORS)


def _candidates(tree: ast.AST, operator: str) -> Iterator[tuple[ast.AST, list[Variant]]]:
    """Matching nodes of ``operator`` in walk order, with their variants (docstrings and
    annotations are not behaviour)."""
    skip = _docstring_nodes(tree)
    annotations: set[int] = set()
    for node in ast.walk(tree):
        for child in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if child is not None:
                annotations.update(id(n) for n in ast.walk(child))
    for node in ast.walk(tree):
        if id(node) in skip or id(node) in annotations:
            continue
        variants = _OPERATORS[operator](node)
        if variants:
            yield node, variants


def enumerate_sites(source: str, operators: tuple[str, ...] = OPERATOR_NAMES) -> list[Site]:
    """Every site of every operator in ``source``, in a fixed order."""
    tree = ast.parse(source)
    out: list[Site] = []
    for operator in operators:
        for index, (_, variants) in enumerate(_candidates(tree, operator)):
            out.extend(Site(operator, index, v) for v in range(len(variants)))
    return out


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target = target
        self.replacement = replacement

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.replacement
        return super().generic_visit(node)


def apply_site(source: str, site: Site) -> Mutant:
    """The mutant of ``source`` at ``site``.

    Raises:
        ValueError: an unknown operator or a site that does not exist.
    """
    if site.operator not in _OPERATORS:
        raise ValueError(f"unknown operator {site.operator!r}")
    tree = ast.parse(source)
    for index, (node, variants) in enumerate(_candidates(tree, site.operator)):
        if index != site.index:
            continue
        if not 0 <= site.variant < len(variants):
            break
        description, mutate = variants[site.variant]
        replacement = mutate(node)
        if replacement is None:
            raise ValueError(f"site {site.label()} cannot be mutated")
        if replacement is not node:
            tree = _Replace(node, replacement).visit(tree)
        ast.fix_missing_locations(tree)
        return Mutant(site, description, ast.unparse(tree))
    raise ValueError(f"no site {site.label()} in the source")


def mutants(source: str, operators: tuple[str, ...] = OPERATOR_NAMES) -> list[Mutant]:
    """Every distinct mutant of ``source`` that compiles and differs from it as code
    (a mutation that unparses to the original text is no mutant)."""
    baseline = ast.unparse(ast.parse(source))
    seen = {baseline}
    out: list[Mutant] = []
    for site in enumerate_sites(source, operators):
        mutant = apply_site(source, site)
        if mutant.source in seen:
            continue
        try:
            compile(mutant.source, "<mutant>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        seen.add(mutant.source)
        out.append(mutant)
    return out
