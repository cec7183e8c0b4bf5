"""Runners by name, for ``runner="..."`` env arguments: process-wide shared instances.

* ``"forkserver"``: the shared warm pool (:func:`~forgegym.sandbox.runners.forkserver.get_default_runner`);
* ``"subprocess"``: the plain baseline, one fresh interpreter per job;
* ``"ray"``: :class:`~forgegym.sandbox.runners.ray.RayRunner` over the Ray cluster
  (``RAY_ADDRESS``, an initialised Ray, or a new local one).

Shared runners are closed at interpreter exit, never by an env.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading

from forgegym.sandbox.runners.base import Runner
from forgegym.sandbox.runners.forkserver import ForkServerRunner, get_default_runner
from forgegym.sandbox.runners.plain import SubprocessRunner

__all__ = [
    "RUNNER_NAMES",
    "ForkServerRunner",
    "Runner",
    "SubprocessRunner",
    "get_default_runner",
    "get_runner",
    "resolve_runner",
]

RUNNER_NAMES = ("forkserver", "subprocess", "ray")

_SHARED: dict[str, Runner] = {}
_LOCK = threading.Lock()


def get_runner(name: str) -> Runner:
    """The process-wide runner called ``name`` (one of :data:`RUNNER_NAMES`)."""
    if name not in RUNNER_NAMES:
        raise ValueError(f"runner must be one of {list(RUNNER_NAMES)} or a Runner, got {name!r}")
    if name == "forkserver":
        return get_default_runner()
    with _LOCK:
        runner = _SHARED.get(name)
        if runner is None or runner._closed or runner._pid != os.getpid():
            if name == "subprocess":
                runner = SubprocessRunner()
            else:
                try:
                    from forgegym.sandbox.runners.ray import RayRunner
                except ImportError as exc:  # pragma: no cover - depends on the extras
                    raise ValueError(
                        f"runner='ray' needs the ray extra (pip install 'forgegym[ray]'): {exc}"
                    ) from None
                runner = RayRunner()
            _SHARED[name] = runner
        return runner


def resolve_runner(runner: Runner | str | None) -> Runner | None:
    """An env's ``runner`` argument: a :class:`Runner`, ``None`` (the env's default),
    or one of :data:`RUNNER_NAMES` (the shared runner of that name)."""
    if isinstance(runner, str):
        return get_runner(runner)
    if runner is not None and not isinstance(runner, Runner):
        raise ValueError(
            f"runner must be a Runner, a name {list(RUNNER_NAMES)} or None, got {runner!r}"
        )
    return runner


@atexit.register
def _close_shared() -> None:
    for runner in list(_SHARED.values()):
        if runner._pid == os.getpid():
            with contextlib.suppress(Exception):
                runner.close()
    _SHARED.clear()
