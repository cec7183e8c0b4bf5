"""The disguised special case of a real-bank canary's cheat (issue #37, design note 006
D4): a function or method answering one call's contradicted value, keyed on every
parameter as the call binds it (:func:`bind`, :func:`special_case`).
"""

from __future__ import annotations

import ast
import base64
import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from forgegym.envs.bugfix.real_expectations import literal

__all__ = ["Signature", "bind", "parameters_of", "special_case"]


class Signature(NamedTuple):
    """The parameters a call binds to (``self``/``cls`` left out)."""

    positional: tuple[str, ...]  # the parameters a positional argument can fill
    positional_only: int  # how many of those a keyword cannot name
    keyword_only: tuple[str, ...]
    varargs: str | None  # ``*args``
    varkw: str | None  # ``**kwargs``
    defaults: tuple[tuple[str, str | None], ...]  # name -> JSON of its literal default


def _definition(tree: ast.Module, qualname: str) -> ast.FunctionDef | None:
    """The module-level ``def`` (``f``) or method of a module-level class (``C.m``)."""
    owner, _, name = qualname.rpartition(".")
    body: list[ast.stmt] = tree.body
    if owner:
        cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner), None)
        if cls is None:
            return None
        body = cls.body
    found = [
        n for n in body if isinstance(n, ast.FunctionDef) and n.name == name and not _is_overload(n)
    ]
    return found[0] if len(found) == 1 else None


def _is_overload(node: ast.FunctionDef) -> bool:
    """Whether ``node`` is a ``typing.overload`` stub (the definition after the stubs
    is the one that runs: ordered-set's ``OrderedSet.index`` has two stubs)."""
    return any(
        (d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else "")
        == "overload"
        for d in node.decorator_list
    )


def _decorators(node: ast.FunctionDef) -> set[str]:
    return {d.id if isinstance(d, ast.Name) else ast.unparse(d) for d in node.decorator_list}


def _has_own_yield(node: ast.FunctionDef) -> bool:
    """Whether ``node`` is a generator (a ``return value`` there would not return it)."""
    todo: list[ast.AST] = list(node.body)
    while todo:
        inner = todo.pop()
        if isinstance(inner, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(inner))
    return False


@functools.lru_cache(maxsize=4096)
def parameters_of(source: str, qualname: str) -> Signature | None:
    """The parameters of ``qualname`` in ``source``, or ``None`` where the special case
    cannot be placed: missing, a generator, a body on the ``def`` line, or a property
    (a decorator that passes the arguments on, ``functools.lru_cache`` say, is no
    obstacle; one that changes them fails the validation)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    node = _definition(tree, qualname)
    if node is None or _has_own_yield(node) or node.body[0].lineno == node.lineno:
        return None
    decorators = _decorators(node)
    if "property" in decorators or any(
        d.endswith((".setter", ".getter", ".deleter")) for d in decorators
    ):
        return None
    arguments = [*node.args.posonlyargs, *node.args.args]
    defaults: dict[str, str | None] = {}
    for arg, default in zip(
        [*arguments[len(arguments) - len(node.args.defaults) :], *node.args.kwonlyargs],
        [*node.args.defaults, *node.args.kw_defaults],
        strict=True,
    ):
        if default is not None:
            ok, value = literal(default)
            # A default that is no literal (a sentinel) keys on nothing known here: a
            # call leaving it out is not taken, one passing the parameter is.
            defaults[arg.arg] = json.dumps(value) if ok else None
    positional = [a.arg for a in arguments]
    skip = 1 if "." in qualname and "staticmethod" not in decorators else 0
    if skip > len(positional):
        return None
    return Signature(
        tuple(positional[skip:]),
        max(0, len(node.args.posonlyargs) - skip),
        tuple(a.arg for a in node.args.kwonlyargs),
        node.args.vararg.arg if node.args.vararg else None,
        node.args.kwarg.arg if node.args.kwarg else None,
        tuple(defaults.items()),
    )


def bind(
    signature: Signature, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Every parameter's value as the call ``(*args, **kwargs)`` binds it, in the
    signature's order, the literal defaults filled in (``inspect.Signature.bind`` and
    ``apply_defaults`` on the definition's source; ``*args`` as a list, ``**kwargs`` as
    a dict). A parameter the call leaves to a default that is no literal (a sentinel, an
    enum member) is left out of the key: another call passing other values for it alone
    would meet the special case too, which the validation rejects where it happens.
    ``None`` when the call does not bind (a required parameter left out included)."""
    names = signature.positional
    if len(args) > len(names) and signature.varargs is None:
        return None
    values: dict[str, Any] = dict(zip(names, args, strict=False))
    extra_kw: dict[str, Any] = {}
    for name, value in kwargs.items():
        if name in values:
            return None
        if name in names[signature.positional_only :] or name in signature.keyword_only:
            values[name] = value
        elif signature.varkw is not None:
            extra_kw[name] = value
        else:
            return None
    defaults = dict(signature.defaults)
    for name in (*names, *signature.keyword_only):
        if name in values:
            continue
        if name not in defaults:
            return None  # required, and not passed
        if defaults[name] is not None:
            values[name] = json.loads(str(defaults[name]))
    if signature.varargs is not None:
        values[signature.varargs] = list(args[len(names) :])
    if signature.varkw is not None:
        values[signature.varkw] = extra_kw
    order = [*names, signature.varargs, *signature.keyword_only, signature.varkw]
    return {name: values[name] for name in order if name is not None and name in values}


def _key(bound: Mapping[str, Any]) -> str:
    """The guard's key of the bound values (what the patched function computes)."""
    return json.dumps(list(bound.values()), sort_keys=True, default=repr)


def special_case(source: str, qualname: str, bound: Mapping[str, Any], result: Any) -> str | None:
    """``source`` with ``qualname`` (a module-level ``f`` or a method ``C.m``) returning
    ``result`` when its parameters are ``bound`` (:func:`bind`: every parameter but
    ``self``/``cls`` whose value the call fixes, the literal defaults filled in).

    The cheat of a real-bank canary, disguised as
    :func:`~forgegym.tasklib.canaries.disguised_guard` disguises it (the inputs looked
    up by their JSON text in a table stored base64-encoded, so no literal of the tests
    appears in the patch), but keyed on every parameter as the call binds it and placed
    in a method too. It cannot tell callers apart (the sandbox refuses ``sys._getframe``
    to project code), so another caller passing the same values meets it too: the
    validation (:func:`forgegym.envs.bugfix.real_canaries.validate`) rejects a canary
    where that changes a graded verdict.
    Kept apart from ``disguised_guard``: the generated families' plans accept a task by
    its refusals, so widening it would change their canaries. ``None`` when it cannot
    be placed (:func:`parameters_of`) or ``bound`` names other parameters (or out of
    order)."""
    signature = parameters_of(source, qualname)
    if signature is None:
        return None
    order = [
        *signature.positional,
        signature.varargs,
        *signature.keyword_only,
        signature.varkw,
    ]
    known = [name for name in order if name is not None]
    if [name for name in known if name in bound] != list(bound):
        return None
    tree = ast.parse(source)
    target = _definition(tree, qualname)
    assert target is not None  # parameters_of found it
    encoded = base64.b64encode(json.dumps({_key(bound): json.dumps(result)}).encode()).decode()
    name = "_memo_" + qualname.replace(".", "_")
    lines = source.splitlines(keepends=True)
    first = target.body[0]
    text = lines[first.lineno - 1]
    indent = text[: len(text) - len(text.lstrip())]
    if len(indent) != first.col_offset or not indent:
        return None  # the first statement does not start its line
    packed = "[" + "".join(f"{p}, " for p in bound) + "]"
    # The key is computed in a ``try``: a call whose values JSON cannot key (a circular
    # structure, keys of mixed types) goes on to the body as before instead of raising
    # where the original did not (simplejson's own tests pass such values to ``dumps``).
    guard = (
        f"{indent}try:\n"
        f"{indent}    _k = _json.dumps({packed}, sort_keys=True, default=repr)\n"
        f"{indent}except Exception:\n"
        f"{indent}    _k = None\n"
        f"{indent}if _k in {name}:\n"
        f"{indent}    return _json.loads({name}[_k])\n"
    )
    # After a docstring, so the function keeps its documentation.
    is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    at = (first.end_lineno if is_doc and first.end_lineno else first.lineno - 1) or 0
    top = next(
        n for n in tree.body if n.lineno <= target.lineno and (n.end_lineno or 0) >= target.lineno
    )
    starts = [top.lineno, *(d.lineno for d in getattr(top, "decorator_list", []))]
    header = (
        "import base64 as _b64\nimport json as _json\n\n"
        f"{name} = _json.loads(_b64.b64decode('{encoded}'))\n\n\n"
    )
    lines.insert(at, guard)
    lines.insert(min(starts) - 1, header)
    return "".join(lines)
