"""The worker's exception printers: Python's :mod:`traceback`, never the C printer.

The C printer (3.11+) parses a segment of each shown source line under that line's file
name to place its carets: a ``compile`` event the runtime policy refuses for a trusted
file (``threading.py`` is on every thread's stack) and that would taint a pristine
module. Exceptions that reach a default hook (a daemon thread of the code under test
raising after pytest restored its own hook, an exception in ``__del__``) are printed by
these instead.
"""

from __future__ import annotations

import contextlib
import sys
import traceback
from typing import Any

from .ledger import _safe_str

__all__ = ["install"]


def _print_thread_exception(args: Any) -> None:
    """``threading.excepthook`` of a run: the default hook's output (a daemon server
    thread that raises once its test is done would otherwise end the worker)."""
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "<unknown>"
    with contextlib.suppress(Exception):
        print(f"Exception in thread {name}:", file=sys.stderr)
        traceback.print_exception(
            args.exc_type, args.exc_value, args.exc_traceback, file=sys.stderr
        )


def _print_unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook`` of a run (an exception in ``__del__``, a callback of the
    collector): the default hook's output through :mod:`traceback`, for the reason
    of the module doc."""
    with contextlib.suppress(Exception):
        where = unraisable.err_msg or "Exception ignored in"
        if unraisable.object is not None:
            where = f"{where}: {_safe_str(unraisable.object)}"
        print(where, file=sys.stderr)
        traceback.print_exception(
            unraisable.exc_type, unraisable.exc_value, unraisable.exc_traceback, file=sys.stderr
        )


def _print_uncaught(exc_type: Any, exc_value: Any, exc_tb: Any) -> None:
    """``sys.excepthook`` of a run."""
    with contextlib.suppress(Exception):
        traceback.print_exception(exc_type, exc_value, exc_tb, file=sys.stderr)


def install() -> None:
    """Install the three printers, also as the defaults code restores
    (``threading.excepthook = threading.__excepthook__``)."""
    import threading

    threading.excepthook = threading.__excepthook__ = _print_thread_exception
    sys.unraisablehook = sys.__unraisablehook__ = _print_unraisable
    sys.excepthook = sys.__excepthook__ = _print_uncaught
