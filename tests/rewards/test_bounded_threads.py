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
