"""A libcst mutation engine: seeded, site-addressed bug injection.

A :class:`Mutation` names a top-level function (or ``Class.method``), an operator and a *site* (the index of a
matching node inside that function, in libcst's post-order). Mutations in different
functions never disturb each other's site numbering, so any subset of a mutation list
applies cleanly: that is what lets a task be regenerated from ``(module, mutations)``
alone, and what lets a scripted policy fix exactly one of several bugs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import libcst as cst

__all__ = [
    "OPERATORS",
    "SUBTLE_OPERATORS",
    "Mutation",
    "Operator",
    "apply_mutations",
    "apply_to_module",
    "enumerate_mutations",
    "function_names",
    "function_node",
    "mutate_function",
    "replace_function",
]


@dataclass(frozen=True, order=True)
class Mutation:
    """One injected bug: operator ``operator`` at site ``site`` of function ``function``."""

    function: str
    operator: str
    site: int

    def to_json(self) -> list[str | int]:
        return [self.function, self.operator, self.site]

    @classmethod
    def from_json(cls, data: Sequence[str | int]) -> Mutation:
        function, operator, site = data
        return cls(str(function), str(operator), int(site))


@dataclass(frozen=True)
class _Context:
    """What an operator may know about the enclosing function."""

    params: tuple[str, ...]


@dataclass(frozen=True)
class Operator:
    """A mutation operator: ``applies(node, ctx)`` says whether ``node`` is a site and
    ``mutate(node, ctx)`` returns the mutated node."""

    name: str
    description: str
    applies: Callable[[cst.CSTNode, _Context], bool]
    mutate: Callable[[cst.CSTNode, _Context], cst.CSTNode]
    subtle: bool = False


def _minus_one(expr: cst.BaseExpression) -> cst.BaseExpression:
    # `x + 1` -> `x` reads like a natural slip; anything else gets `- 1`.
    if (
        isinstance(expr, cst.BinaryOperation)
        and isinstance(expr.operator, cst.Add)
        and isinstance(expr.right, cst.Integer)
        and expr.right.value == "1"
    ):
        return expr.left
    return cst.BinaryOperation(left=expr, operator=cst.Subtract(), right=cst.Integer("1"))


def _plus_one(expr: cst.BaseExpression) -> cst.BaseExpression:
    return cst.BinaryOperation(left=expr, operator=cst.Add(), right=cst.Integer("1"))


def _is_call_to(node: cst.CSTNode, name: str) -> bool:
    return (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name
    )


# ------------------------------------------------------------------ range / slice
def _range_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    return (
        _is_call_to(node, "range")
        and 1 <= len(node.args) <= 3  # type: ignore[attr-defined]
        and all(a.keyword is None and not a.star for a in node.args)  # type: ignore[attr-defined]
    )


def _range_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, cst.Call)
    index = 0 if len(node.args) == 1 else 1
    args = list(node.args)
    args[index] = args[index].with_changes(value=_minus_one(args[index].value))
    return node.with_changes(args=args)


def _slice_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    return isinstance(node, cst.Slice) and (node.upper is not None or node.lower is not None)


def _slice_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, cst.Slice)
    if node.upper is not None:
        return node.with_changes(upper=_minus_one(node.upper))
    assert node.lower is not None
    return node.with_changes(lower=_plus_one(node.lower))


# ------------------------------------------------------------------ comparisons
_BOUNDARY = {cst.LessThan: cst.LessThanEqual, cst.LessThanEqual: cst.LessThan}
_BOUNDARY.update({cst.GreaterThan: cst.GreaterThanEqual, cst.GreaterThanEqual: cst.GreaterThan})
_NEGATED = {
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
}


def _comparison_site(table: dict[type, type]) -> tuple[Callable, Callable]:
    def applies(node: cst.CSTNode, ctx: _Context) -> bool:
        return isinstance(node, cst.Comparison) and type(node.comparisons[0].operator) in table

    def mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
        assert isinstance(node, cst.Comparison)
        first = node.comparisons[0]
        old = first.operator
        new = table[type(old)](
            whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")
        )
        return node.with_changes(
            comparisons=[first.with_changes(operator=new), *node.comparisons[1:]]
        )

    return applies, mutate


_flip_applies, _flip_mutate = _comparison_site(_BOUNDARY)  # type: ignore[arg-type]
_neg_applies, _neg_mutate = _comparison_site(_NEGATED)  # type: ignore[arg-type]


# ------------------------------------------------------------------ boolean / arithmetic
def _bool_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    return isinstance(node, cst.BooleanOperation)


def _bool_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, cst.BooleanOperation)
    ws = {
        "whitespace_before": cst.SimpleWhitespace(" "),
        "whitespace_after": cst.SimpleWhitespace(" "),
    }
    new = cst.Or(**ws) if isinstance(node.operator, cst.And) else cst.And(**ws)
    return node.with_changes(operator=new)


_ARITH = {
    cst.Add: cst.Subtract,
    cst.Subtract: cst.Add,
    cst.Multiply: cst.Add,
    cst.FloorDivide: cst.Divide,
    cst.Modulo: cst.FloorDivide,
}


def _arith_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    return isinstance(node, cst.BinaryOperation) and type(node.operator) in _ARITH


def _arith_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, cst.BinaryOperation)
    old = node.operator
    new = _ARITH[type(old)](  # type: ignore[abstract]
        whitespace_before=old.whitespace_before,  # type: ignore[attr-defined]
        whitespace_after=old.whitespace_after,  # type: ignore[attr-defined]
    )
    return node.with_changes(operator=new)


# ------------------------------------------------------------------ conditions
_ATOMIC = (cst.Name, cst.Call, cst.Attribute, cst.Subscript)


def _negate_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    return isinstance(node, (cst.If, cst.While))


def _negate_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, (cst.If, cst.While))
    test = node.test
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return node.with_changes(test=test.expression)
    if not isinstance(test, _ATOMIC):
        test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node.with_changes(test=cst.UnaryOperation(operator=cst.Not(), expression=test))


def _unary_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Not, cst.Minus))


def _unary_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, cst.UnaryOperation)
    return node.expression


# ------------------------------------------------------------------ statements / values
def _return_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    if not isinstance(node, cst.Return) or node.value is None:
        return False
    value = node.value
    return not (isinstance(value, cst.Name) and value.value == "None")


def _return_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, cst.Return) and node.value is not None
    value = node.value
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        new: cst.BaseExpression = cst.Name("False" if value.value == "True" else "True")
    elif isinstance(value, cst.Integer):
        new = cst.Integer(str(int(value.value, 0) + 1))
    else:
        new = cst.Name("None")
    return node.with_changes(value=new)


_REMOVABLE = (cst.Assign, cst.AugAssign, cst.Expr)


def _remove_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    return isinstance(node, cst.IndentedBlock) and any(_removable(s) for s in node.body[:-1])


def _removable(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], _REMOVABLE)
        and not (
            isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString)
        )  # docstrings are not behaviour
    )


def _remove_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    # Removes the *last* removable statement that is not the block's final one (the
    # statement most often load-bearing: an update just before a return or loop end).
    assert isinstance(node, cst.IndentedBlock)
    body = list(node.body)
    index = max(i for i, s in enumerate(body[:-1]) if _removable(s))
    del body[index]
    return node.with_changes(body=body)


def _swap_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    if not isinstance(node, cst.Call) or len(node.args) < 2:
        return False
    first, second = node.args[0], node.args[1]
    plain = all(a.keyword is None and not a.star for a in (first, second))
    return plain and cst.Module([]).code_for_node(first.value) != cst.Module([]).code_for_node(
        second.value
    )


def _swap_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, cst.Call)
    args = list(node.args)
    args[0], args[1] = (
        args[0].with_changes(value=args[1].value),
        args[1].with_changes(value=args[0].value),
    )
    return node.with_changes(args=args)


def _default_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    if not isinstance(node, cst.Param) or node.default is None:
        return False
    d = node.default
    return isinstance(d, (cst.Integer, cst.SimpleString)) or (
        isinstance(d, cst.Name) and d.value in ("True", "False")
    )


def _default_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, cst.Param) and node.default is not None
    d = node.default
    if isinstance(d, cst.Integer):
        new: cst.BaseExpression = cst.Integer(str(int(d.value, 0) + 1))
    elif isinstance(d, cst.SimpleString):
        new = cst.SimpleString('" "' if d.evaluated_value != " " else '"-"')
    else:
        assert isinstance(d, cst.Name)
        new = cst.Name("False" if d.value == "True" else "True")
    return node.with_changes(default=new)


def _variable_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    return (
        isinstance(node, cst.Arg)
        and node.keyword is None
        and not node.star
        and isinstance(node.value, cst.Name)
        and node.value.value in ctx.params
        and len(ctx.params) >= 2
    )


def _variable_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, cst.Arg) and isinstance(node.value, cst.Name)
    params = ctx.params
    other = params[(params.index(node.value.value) + 1) % len(params)]
    return node.with_changes(value=cst.Name(other))


def _constant_applies(node: cst.CSTNode, ctx: _Context) -> bool:
    return isinstance(node, cst.Integer)


def _constant_mutate(node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
    assert isinstance(node, cst.Integer)
    return cst.Integer(str(int(node.value, 0) + 1))


#: Every operator by name. ``subtle`` operators change a boundary or a constant by one:
#: the failing behaviour is narrow, so they count towards higher difficulty.
OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in (
        Operator(
            "range_off_by_one", "range() stop shortened by one", _range_applies, _range_mutate, True
        ),
        Operator(
            "slice_off_by_one", "slice bound moved by one", _slice_applies, _slice_mutate, True
        ),
        Operator("comparison_boundary", "< vs <=, > vs >=", _flip_applies, _flip_mutate, True),
        Operator("comparison_negated", "== vs !=, in vs not in", _neg_applies, _neg_mutate),
        Operator("boolean_swap", "and vs or", _bool_applies, _bool_mutate),
        Operator("arithmetic_swap", "+ vs -, * vs +, // vs /", _arith_applies, _arith_mutate, True),
        Operator(
            "negated_condition", "if/while condition negated", _negate_applies, _negate_mutate
        ),
        Operator("dropped_unary", "not/minus dropped", _unary_applies, _unary_mutate),
        Operator("wrong_return", "wrong return value", _return_applies, _return_mutate),
        Operator("removed_statement", "a statement removed", _remove_applies, _remove_mutate),
        Operator(
            "swapped_arguments", "first two call arguments swapped", _swap_applies, _swap_mutate
        ),
        Operator(
            "wrong_default", "parameter default changed", _default_applies, _default_mutate, True
        ),
        Operator("wrong_variable", "another parameter passed", _variable_applies, _variable_mutate),
        Operator(
            "constant_off_by_one", "integer constant +1", _constant_applies, _constant_mutate, True
        ),
    )
}
SUBTLE_OPERATORS = frozenset(name for name, op in OPERATORS.items() if op.subtle)


class _SiteTransformer(cst.CSTTransformer):
    """Counts the sites of one operator in post-order; mutates site ``target``."""

    def __init__(self, operator: Operator, ctx: _Context, target: int | None) -> None:
        super().__init__()
        self.operator = operator
        self.ctx = ctx
        self.target = target
        self.count = 0
        self.mutated = False

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        if self.operator.applies(updated_node, self.ctx):
            index = self.count
            self.count += 1
            if index == self.target:
                self.mutated = True
                return self.operator.mutate(updated_node, self.ctx)
        return updated_node


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _functions(
    module: cst.Module, methods: bool = False, private: bool = False
) -> dict[str, tuple[int, int | None]]:
    """Mutable functions: public top-level ones (``name`` -> ``(index, None)``) and,
    with ``methods``, the public and dunder methods of top-level classes (``Class.name``
    -> ``(class index, index in its body)``); with ``private``, also the private
    top-level helpers and private methods (``_helper``, ``Class._method``)."""
    out: dict[str, tuple[int, int | None]] = {}
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, cst.FunctionDef) and (private or not stmt.name.value.startswith("_")):
            out[stmt.name.value] = (i, None)
        elif (
            methods and isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock)
        ):
            for j, member in enumerate(stmt.body.body):
                if isinstance(member, cst.FunctionDef) and (private or _public(member.name.value)):
                    # a redefined name (a property's setter) keeps its first definition
                    out.setdefault(f"{stmt.name.value}.{member.name.value}", (i, j))
    return out


def _node(module: cst.Module, where: tuple[int, int | None]) -> cst.FunctionDef:
    index, member = where
    node: cst.BaseStatement = module.body[index]
    if member is not None:
        assert isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock)
        node = node.body.body[member]
    assert isinstance(node, cst.FunctionDef)
    return node


def _replace(
    body: list[cst.BaseStatement], where: tuple[int, int | None], new: cst.FunctionDef
) -> None:
    index, member = where
    if member is None:
        body[index] = new
        return
    cls = body[index]
    assert isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock)
    members = list(cls.body.body)
    members[member] = new
    body[index] = cls.with_changes(body=cls.body.with_changes(body=members))


def function_node(source: str | cst.Module, name: str) -> cst.FunctionDef:
    """The definition of mutable function ``name`` (``f`` or ``Class.method``) in
    ``source`` (text or a parsed module). Raises ``KeyError`` when there is none."""
    module = cst.parse_module(source) if isinstance(source, str) else source
    found = _functions(module, methods="." in name, private=True).get(name)
    if found is None:
        raise KeyError(name)
    return _node(module, found)


def function_names(source: str | cst.Module) -> list[str]:
    """Every function :func:`function_node` finds in ``source``: top-level functions and
    the methods of top-level classes (``Class.method``), public and private."""
    module = cst.parse_module(source) if isinstance(source, str) else source
    return list(_functions(module, methods=True, private=True))


def replace_function(source: str, name: str, definition: str) -> str:
    """``source`` with function ``name`` (``f`` or ``Class.method``) replaced by
    ``definition`` (the text of one ``def``, decorators included, at any indentation
    level libcst reads as a module). The lines above the old definition (blank lines,
    comments) stay. Raises ``KeyError`` when there is no such function and
    ``ValueError`` when ``definition`` is not one function."""
    module = cst.parse_module(source)
    where = _functions(module, methods="." in name, private=True).get(name)
    if where is None:
        raise KeyError(name)
    parsed = cst.parse_module(definition).body
    if len(parsed) != 1 or not isinstance(parsed[0], cst.FunctionDef):
        raise ValueError(f"definition of {name!r}: expected one function definition")
    new = parsed[0].with_changes(leading_lines=_node(module, where).leading_lines)
    body: list[cst.BaseStatement] = list(module.body)
    _replace(body, where, new)
    return module.with_changes(body=body).code


def _context(fn: cst.FunctionDef) -> _Context:
    return _Context(params=tuple(p.name.value for p in fn.params.params))


def enumerate_mutations(
    source: str,
    operators: Iterable[str] | None = None,
    *,
    methods: bool = False,
    private: bool = False,
) -> list[Mutation]:
    """Every site of every operator in every top-level public function (and, with
    ``methods``, every public or dunder method of a top-level class, named
    ``Class.method``; with ``private``, the private helpers and methods too), in a fixed
    order (a function's nested functions are sites of the function)."""
    module = cst.parse_module(source)
    names = list(operators) if operators is not None else list(OPERATORS)
    out: list[Mutation] = []
    for fname, where in _functions(module, methods, private).items():
        fn = _node(module, where)
        for op_name in names:
            counter = _SiteTransformer(OPERATORS[op_name], _context(fn), None)
            fn.visit(counter)
            out.extend(Mutation(fname, op_name, site) for site in range(counter.count))
    return out


def apply_mutations(source: str, mutations: Iterable[Mutation]) -> str:
    """Apply ``mutations`` (each in its own function's numbering) and return the code.

    Raises:
        ValueError: an unknown operator/function, a missing site, or two mutations in
            the same function (their sites would interfere).
    """
    return apply_to_module(cst.parse_module(source), mutations).code


def apply_to_module(module: cst.Module, mutations: Iterable[Mutation]) -> cst.Module:
    """:func:`apply_mutations` on a parsed module (parse a large file once, mutate it many
    times); the module itself is not changed."""
    mutations = list(mutations)
    functions = _functions(module, methods=any("." in m.function for m in mutations), private=True)
    body: list[cst.BaseStatement] = list(module.body)
    seen: set[str] = set()
    for mutation in mutations:
        if mutation.function in seen:
            raise ValueError(f"two mutations in function {mutation.function!r}")
        seen.add(mutation.function)
        where = functions.get(mutation.function)
        if where is None:
            raise ValueError(f"unknown function {mutation.function!r}")
        new_fn = _mutate(_node(module.with_changes(body=body), where), mutation)
        _replace(body, where, new_fn)
    return module.with_changes(body=body)


def mutate_function(module: cst.Module, mutation: Mutation) -> cst.FunctionDef:
    """The mutated definition of ``mutation``'s function in a parsed module."""
    where = _functions(module, methods="." in mutation.function, private=True).get(
        mutation.function
    )
    if where is None:
        raise ValueError(f"unknown function {mutation.function!r}")
    return _mutate(_node(module, where), mutation)


def _mutate(fn: cst.FunctionDef, mutation: Mutation) -> cst.FunctionDef:
    if mutation.operator not in OPERATORS:
        raise ValueError(f"unknown operator {mutation.operator!r}")
    transformer = _SiteTransformer(OPERATORS[mutation.operator], _context(fn), mutation.site)
    new_fn = fn.visit(transformer)
    if not transformer.mutated:
        raise ValueError(f"no site {mutation.site} for {mutation.operator} in {mutation.function}")
    assert isinstance(new_fn, cst.FunctionDef)
    return new_fn
