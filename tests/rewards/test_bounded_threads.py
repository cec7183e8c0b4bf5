"""Parsing model text from several threads at once (the server, batch grading)."""

from __future__ import annotations

import threading
from pathlib import Path

from forgegym.rewards import bounded


def test_parse_from_many_threads_never_fails() -> None:
    # CPython 3.11/3.12 share the AST builder's recursion depth between threads
    # (python/cpython#106905): unlocked, this raised SystemError in the server's tests.
    source = Path(bounded.__file__).read_text(encoding="utf-8")
    errors: list[str] = []

    def work() -> None:
        for _ in range(100):
            try:
                tree = bounded.parse(source)
                assert tree is not None
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(repr(exc))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_the_cross_thread_parser_mismatch_is_retried_then_unverifiable(monkeypatch) -> None:
    """CPython 3.11's AST builder keeps its depth in interpreter-wide state: a parse in
    another thread (pytest's rewriter warming a project's tests) can make ours fail with
    ``SystemError: AST constructor recursion depth mismatch``. It is retried; if it
    never clears, the source is unverifiable, never a crash."""
    import ast

    from forgegym.rewards import bounded

    real_parse = ast.parse
    calls = {"n": 0}

    def flaky_parse(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=42, after=19)")
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", flaky_parse)
    assert bounded.ast_parse("x = 1").body and calls["n"] == 2

    def broken_parse(*args, **kwargs):
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=0)")

    monkeypatch.setattr(ast, "parse", broken_parse)
    assert bounded.parse_or_none("y = 2  # not cached yet", "f.py") is None
