"""Functions whose outcome depends on when (or with what luck) they run.

A real task's behaviour checks compare the candidate's outcomes with the pristine
function's, recorded once and cached. A function that reads the clock or a source of
entropy answers differently later, so its recorded outcomes would fail the pristine
function itself: boltons' ``decimal_relative_time`` (``datetime.utcnow()``) and oauthlib's
``parse_expires`` (``round(time.time())``) failed their own reference fix that way, while
computing the checks had run the pristine calls twice within seconds and kept them. Such a
task is graded by its tests alone (``BehaviourChecks.status == "reads_clock"``).

The function's own body is read (nested functions and lambdas included), and so are the
functions of the same module it calls by name, transitively (boltons' ``relative_time``
reads the clock through ``decimal_relative_time``; a name is matched by its last part,
which can only err towards grading by the tests alone). A clock read through another
module is not seen; where it changes within seconds, the two pristine runs of
:func:`~forgegym.envs.bugfix.behaviour.compute_checks` drop the call.
"""

from __future__ import annotations

import ast
import functools

from forgegym.tasklib.definitions import find_definition

#: ``<anything>.<attr>()`` that reads the clock: ``datetime.now()``, ``date.today()``.
CLOCK_METHODS = frozenset(
    {
        "now",
        "utcnow",
        "today",
        "monotonic",
        "monotonic_ns",
        "perf_counter",
        "perf_counter_ns",
        "process_time",
        "time_ns",
    }
)
#: ``time.<attr>()`` (or a bare ``<attr>()`` imported from it) that reads the clock
#: when called without a time argument.
TIME_FUNCTIONS = frozenset({"time", "localtime", "gmtime", "ctime", "asctime", "strftime"})
#: Modules every call of which draws entropy (``uuid``: only ``uuid1``/``uuid4``, below).
ENTROPY_MODULES = frozenset({"random", "secrets"})
#: Entropy reads under any receiver: ``os.urandom()``, ``uuid4()``, ``rng.getrandbits()``.
ENTROPY_CALLS = frozenset(
    {"urandom", "getrandbits", "uuid1", "uuid4", "token_hex", "token_bytes", "token_urlsafe"}
)


def _imported(tree: ast.Module) -> dict[str, str]:
    """Names bound by ``from time|random|secrets|os|uuid import x [as y]``: ``{y: "time.x"}``."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in _SOURCES and not node.level:
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


_SOURCES = frozenset({"time", "random", "secrets", "os", "uuid"})


def _clock_read(call: ast.Call, imported: dict[str, str]) -> str | None:
    func = call.func
    if isinstance(func, ast.Name) and func.id in imported:
        # ``from time import time as now_s``: judged as ``time.time()`` would be
        module, _, name = imported[func.id].partition(".")
        as_attribute = ast.Call(
            func=ast.Attribute(value=ast.Name(id=module), attr=name),
            args=call.args,
            keywords=call.keywords,
        )
        found = _clock_read(as_attribute, {})
        return None if found is None else f"{func.id}() ({imported[func.id]})"
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else ""
        if func.attr in CLOCK_METHODS or func.attr in ENTROPY_CALLS:
            return f"{ast.unparse(func)}()"
        if owner in ENTROPY_MODULES and not (func.attr == "Random" and call.args):
            return f"{ast.unparse(func)}()"  # a seeded ``random.Random(0)`` is not
        # ``time.time()``, ``_time.localtime()``; ``time.strftime(fmt)`` reads the clock,
        # ``time.strftime(fmt, t)`` does not
        if owner.lstrip("_") == "time" and func.attr in TIME_FUNCTIONS:
            limit = 1 if func.attr == "strftime" else 0
            if len(call.args) <= limit and not call.keywords:
                return f"{ast.unparse(func)}()"
        return None
    if isinstance(func, ast.Name):
        if func.id in CLOCK_METHODS - {"now", "today"} or func.id in ENTROPY_CALLS:
            return f"{func.id}()"
        if func.id == "time" and not call.args and not call.keywords:
            return "time()"  # ``from time import time``
    return None


def _direct_read(function: ast.AST, imported: dict[str, str]) -> str | None:
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            found = _clock_read(node, imported)
            if found is not None:
                return found
    return None


def _callees(function: ast.AST) -> set[str]:
    """The last name part of everything ``function`` calls (``f()``, ``self.f()``)."""
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                names.add(node.func.id)
            elif isinstance(node.func, ast.Attribute):
                names.add(node.func.attr)
    return names


def _module_readers(tree: ast.Module, imported: dict[str, str]) -> set[str]:
    """Names of the module's functions that read the clock, directly or through other
    functions of the module (a fixed point over calls by name)."""
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    readers = {d.name for d in defs if _direct_read(d, imported) is not None}
    calls = {id(d): _callees(d) for d in defs}
    grew = True
    while grew:
        grew = False
        for d in defs:
            if d.name not in readers and calls[id(d)] & readers:
                readers.add(d.name)
                grew = True
    return readers


@functools.lru_cache(maxsize=1024)
def function_reads_clock(source: str, qualname: str) -> str | None:
    """The first clock or entropy read of ``qualname`` in ``source`` (as written, e.g.
    ``"datetime.utcnow()"``, or the module's function it goes through, e.g.
    ``"decimal_relative_time() (reads the clock)"``), None when none is seen or the
    function is not found."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    function = find_definition(tree, qualname.split("."))
    if function is None or isinstance(function, ast.ClassDef):
        return None
    imported = _imported(tree)
    direct = _direct_read(function, imported)
    if direct is not None:
        return direct
    through = sorted(_callees(function) & _module_readers(tree, imported))
    return f"{through[0]}() (reads the clock)" if through else None
