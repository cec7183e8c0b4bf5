"""Semantics-preserving variants of the code under test, one per run.

The power check runs the submitted tests against a bug-injected version of the code
under test; the chaos reruns run them against the submitted code. If the reruns always
saw the same bytes, a test could recognise "the pristine code" (a hash of the file, of
its AST, of its bytecode, its size or line count) and skip its flaky assertions exactly
there, while still failing on the mutant. So every run (rerun or power check) gets a
fresh variant drawn from one distribution: local variables renamed, no-op statements
added to function bodies, independent top-level definitions reordered, the layout
normalised and random comment lines added. No file path changes (every run looks the
same from outside the file), and behaviour is unchanged, so the outcome of an honest
test cannot depend on the variant. Seeds come from the operating system: nothing the
agent knows (task id, schedule seed) predicts them.

A source the transformations cannot handle safely (it does not parse, calls ``locals``
/``vars``/``eval``/``exec``, or its variant does not compile) gets the comment lines only.
"""

from __future__ import annotations

import ast
import random
import secrets

__all__ = ["new_rng", "variant"]

_INTROSPECTIVE = {"locals", "vars", "eval", "exec", "dir", "globals"}
_NESTED = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_NOOPS = ("[]", "{}", "[0][0]")
_MAX_SOURCE = 200_000


def new_rng() -> random.Random:
    """A variant RNG seeded from the operating system (unpredictable to the agent)."""
    return random.Random(secrets.randbits(64))


def _own_nodes(func: ast.AST) -> list[ast.AST]:
    """Nodes of ``func``'s own scope (not inside a nested function, class, lambda or
    comprehension)."""
    out: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, _NESTED):
            stack.extend(ast.iter_child_nodes(node))
    return out


def _nested_names(func: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(func):
        if node is not func and isinstance(node, _NESTED):
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            names |= {n.arg for n in ast.walk(node) if isinstance(n, ast.arg)}
    return names


def _rename_locals(func: ast.FunctionDef | ast.AsyncFunctionDef, rng: random.Random) -> None:
    own = _own_nodes(func)
    if any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _INTROSPECTIVE
        for n in ast.walk(func)
    ):
        return
    params = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    declared = {name for n in own if isinstance(n, ast.Global | ast.Nonlocal) for name in n.names}
    stored = {
        n.id for n in own if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)
    }
    stored |= {n.name for n in own if isinstance(n, ast.ExceptHandler) and n.name}
    # Names a nested scope sees (closures) or that something else binds stay as they are.
    candidates = sorted(stored - params - declared - _nested_names(func))
    if any(isinstance(n, ast.MatchAs | ast.MatchStar | ast.MatchMapping) for n in own):
        return
    mapping = {name: f"{name}_{rng.randrange(16**6):06x}" for name in candidates}
    for node in own:
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
        elif isinstance(node, ast.ExceptHandler) and node.name in mapping:
            node.name = mapping[node.name]


def _add_noops(body: list[ast.stmt], rng: random.Random) -> None:
    start = 1 if body and _is_docstring(body[0]) else 0
    for _ in range(rng.randint(1, 2)):
        position = rng.randint(start, len(body))
        body.insert(position, ast.parse(rng.choice(_NOOPS)).body[0])


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _shuffle_runs(body: list[ast.stmt], rng: random.Random) -> list[ast.stmt]:
    """Permute maximal runs of consecutive function definitions whose decorators,
    defaults and annotations name no function of the run (their order cannot matter)."""
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []

    def flush() -> None:
        names = {f.name for f in run if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
        movable = all(
            not any(
                isinstance(n, ast.Name) and n.id in names
                for part in (*f.decorator_list, f.args, *([f.returns] if f.returns else []))
                for n in ast.walk(part)
            )
            for f in run
            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        )
        if movable and len(run) > 1:
            rng.shuffle(run)
        out.extend(run)
        run.clear()

    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            run.append(stmt)
        else:
            flush()
            out.append(stmt)
    flush()
    return out


def _with_comments(text: str, rng: random.Random) -> str:
    """Random comment and blank lines between top-level statements of ``text``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    lines = text.splitlines(keepends=True)
    starts = sorted({min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))])
                     for n in tree.body})  # fmt: skip
    for start in reversed(starts):
        if rng.random() < 0.5:
            comment = f"# {secrets.token_hex(rng.randint(2, 12))}\n" + "\n" * rng.randint(0, 2)
            lines.insert(start - 1, comment)
    return "".join(lines) + f"# {secrets.token_hex(4)}\n" * rng.randint(0, 2)


def variant(source: str, rng: random.Random) -> str:
    """A variant of ``source`` with the behaviour of ``source`` (see the module doc)."""
    if len(source) > _MAX_SOURCE:
        return source
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    try:
        if any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _INTROSPECTIVE
            for n in ast.walk(tree)
        ):
            raise ValueError("introspective module")
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                _rename_locals(node, rng)
                _add_noops(node.body, rng)
            if isinstance(node, ast.ClassDef):
                node.body = _shuffle_runs(node.body, rng)
        tree.body = _shuffle_runs(tree.body, rng)
        text = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
        compile(text, "<variant>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        text = source
    return _with_comments(text, rng)
