"""AST-only deep signals for flaky-test diagnosis (nothing is imported or run).

Each signal is ``path:line: kind: detail``; the list is capped so observations stay
bounded.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from forgegym.rewards import bounded

__all__ = ["deep_signals"]

_MUTABLE = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_SPAWN = {"asyncio.ensure_future", "asyncio.create_task", "loop.create_task"}
_IMPORT_TIME = ("random.", "time.time", "os.environ", "datetime.now", "uuid.")


def _name(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd nodes
        return ""


def _signals_of(path: str, source: str) -> list[str]:
    problem = bounded.source_problem(source)
    if problem is not None:
        return [f"{path}:0: not_analysed: {problem}"]
    try:
        tree = bounded.ast_parse(source)
        bounded.check_tree(tree, path)
    except SyntaxError as exc:
        return [f"{path}:{exc.lineno or 0}: syntax_error: {exc.msg}"]
    except (bounded.Unverifiable, RecursionError, MemoryError) as exc:
        return [f"{path}:0: not_analysed: {exc or type(exc).__name__}"]
    out: list[str] = []
    node: ast.AST
    for node in tree.body:
        # Module-level mutable globals and import-time side effects.
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            if isinstance(node.value, _MUTABLE):
                target = _name(node.targets[0] if isinstance(node, ast.Assign) else node.target)
                out.append(
                    f"{path}:{node.lineno}: mutable_global: {target} is module-level mutable state"
                )
            calls = [_name(c.func) for c in ast.walk(node.value) if isinstance(c, ast.Call)]
            hits = [c for c in calls if c.startswith(_IMPORT_TIME)]
            if hits:
                out.append(f"{path}:{node.lineno}: import_time_side_effect: {hits[0]}() at import")
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.Assign) and isinstance(item.value, _MUTABLE):
                    out.append(
                        f"{path}:{item.lineno}: mutable_class_attr: {node.name}."
                        f"{_name(item.targets[0])} is shared by every instance"
                    )
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None and isinstance(default, _MUTABLE):
                    out.append(
                        f"{path}:{node.lineno}: mutable_default: {node.name}() has a mutable default"
                    )
            for deco in node.decorator_list:
                text = _name(deco)
                if "lru_cache" in text or text.endswith("cache"):
                    out.append(f"{path}:{node.lineno}: cache: {node.name}() is memoised ({text})")
                if "fixture" in text and ("module" in text or "session" in text or "class" in text):
                    out.append(f"{path}:{node.lineno}: fixture_scope: {node.name} is {text}")
        if isinstance(node, ast.Call):
            func = _name(node.func)
            if func.endswith(".start") and isinstance(node.func, ast.Attribute):
                inner = node.func.value
                if isinstance(inner, ast.Call) and "patch" in _name(inner.func):
                    out.append(
                        f"{path}:{node.lineno}: mock_without_stop: {_name(inner.func)}(...).start()"
                    )
            if func in _SPAWN:
                out.append(
                    f"{path}:{node.lineno}: unawaited_task: {func}() result not awaited here"
                )
            if func.endswith("Thread"):
                out.append(f"{path}:{node.lineno}: thread: a Thread is created; check it is joined")
            if func.endswith("put_nowait"):
                out.append(f"{path}:{node.lineno}: queue_full_risk: put_nowait on a bounded queue")
            if func in ("random.choice", "random.shuffle", "random.random", "random.sample"):
                out.append(f"{path}:{node.lineno}: unseeded_random: {func}() uses the global RNG")
            if func.endswith("fromtimestamp") and not any(k.arg == "tz" for k in node.keywords):
                out.append(f"{path}:{node.lineno}: local_time: {func}() without tz")
            if func == "time.time":
                out.append(f"{path}:{node.lineno}: wall_clock: time.time() read")
        if isinstance(node, ast.Assign):
            for assigned in node.targets:
                if (
                    isinstance(assigned, ast.Attribute)
                    and isinstance(assigned.value, ast.Name)
                    and path.rsplit("/", 1)[-1].startswith("test")
                ):
                    out.append(
                        f"{path}:{node.lineno}: attribute_patch: {_name(assigned)} assigned "
                        "in a test without restore"
                    )
        if isinstance(node, ast.Call) and _name(node.func).endswith("environ.get"):
            out.append(f"{path}:{node.lineno}: env_dependent: {_name(node)}")
    return out


def deep_signals(files: Mapping[str, str], *, limit: int = 30) -> list[str]:
    """Signals of every ``.py`` file in ``files`` (sorted by path, capped at ``limit``)."""
    found: list[str] = []
    for path in sorted(files):
        if path.endswith(".py") and not path.endswith("fakes.py"):
            found.extend(_signals_of(path, files[path]))
    return found[:limit]
