"""Environment sessions of ``forgegym serve``: a cap, an idle reaper, idempotent steps.

One session is one Gymnasium environment. A WebSocket connection owns one session for
its lifetime; HTTP clients name theirs with ``episode_id``. Each session runs its env
calls on its own single thread (envs are not thread-safe; the event loop never blocks
on a step), serialised by an ``asyncio.Lock``.

A session's env (its workspace, its graders and any sandbox pool it owns) is closed on
``close``, when the reaper finds it idle for ``idle_timeout_s``, and on shutdown. A
step still running is never interrupted: closing waits for it (the runner bounds every
sandbox job's wall time, so a step always ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

__all__ = [
    "CapacityError",
    "FactoryError",
    "Session",
    "SessionManager",
    "StepPending",
    "UnknownSessionError",
]

log = logging.getLogger(__name__)

#: How many answered ``request_id``s a session remembers.
IDEMPOTENCY_WINDOW = 256


class CapacityError(RuntimeError):
    """The server already holds ``max_sessions`` sessions."""

    def __init__(self, active: int, max_sessions: int) -> None:
        super().__init__(
            f"server at capacity: {active} of {max_sessions} sessions in use; close a "
            "session or retry later"
        )
        self.active = active
        self.max_sessions = max_sessions


class FactoryError(RuntimeError):
    """Creating the environment failed."""


class UnknownSessionError(KeyError):
    """No session has this id (never opened, closed, or reaped)."""

    def __str__(self) -> str:
        return f"unknown session {self.args[0]!r} (never opened, closed, or reaped when idle)"


class StepPending(TimeoutError):
    """A step ran past its ``timeout_s``; it keeps running and its answer stays
    retrievable under ``request_id``."""

    def __init__(self, request_id: str, timeout_s: float) -> None:
        super().__init__(
            f"the step is still running after timeout_s={timeout_s:g}; retry with "
            f"request_id={request_id!r} to get its result"
        )
        self.request_id = request_id


@dataclass(eq=False)
class Session:
    """One environment and its bookkeeping."""

    session_id: str
    env: gym.Env[Any, Any]
    kind: str
    executor: ThreadPoolExecutor
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    created_at: float = field(default_factory=time.time)
    last_activity: float = field(default_factory=time.monotonic)
    step_count: int = 0
    total_reward: float = 0.0
    done: bool = False
    last_info: dict[str, Any] = field(default_factory=dict)
    in_flight: int = 0
    answers: OrderedDict[str, asyncio.Future[Any]] = field(default_factory=OrderedDict)

    def touch(self) -> None:
        self.last_activity = time.monotonic()


class SessionManager:
    """Sessions over environments built by ``factory``.

    Args:
        factory: builds one environment (called on the session's own thread).
        max_sessions: the cap; opening one more raises :class:`CapacityError`.
        idle_timeout_s: sessions idle this long are closed by the reaper (``None``: never).
    """

    def __init__(
        self,
        factory: Callable[[], gym.Env[Any, Any]],
        *,
        max_sessions: int = 64,
        idle_timeout_s: float | None = 600.0,
    ) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {max_sessions!r}")
        if idle_timeout_s is not None and idle_timeout_s <= 0:
            raise ValueError(f"idle_timeout_s must be > 0 or None, got {idle_timeout_s!r}")
        self.factory = factory
        self.max_sessions = max_sessions
        self.idle_timeout_s = idle_timeout_s
        self._sessions: dict[str, Session | None] = {}
        self._lock = asyncio.Lock()
        self._reaper: asyncio.Task[None] | None = None
        self.opened = 0
        self.closed = 0
        self.reaped = 0

    # ---------------------------------------------------------------- lifecycle
    @property
    def active(self) -> int:
        return len(self._sessions)

    def ids(self, kind: str | None = None) -> list[str]:
        """Ids of the open sessions (of one ``kind``, ``"http"`` or ``"ws"``, if given)."""
        return [
            sid
            for sid, s in list(self._sessions.items())
            if s is not None and (kind is None or s.kind == kind)
        ]

    async def open(self, session_id: str | None = None, *, kind: str = "http") -> Session:
        """Create a session (its env is built on the session's thread)."""
        async with self._lock:
            if session_id is not None and session_id in self._sessions:
                raise ValueError(f"episode_id {session_id!r} is already an open session")
            if len(self._sessions) >= self.max_sessions:
                raise CapacityError(len(self._sessions), self.max_sessions)
            session_id = session_id or uuid.uuid4().hex
            self._sessions[session_id] = None  # reserve the slot while the env is built
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"forge-{session_id[:8]}")
        try:
            env = await asyncio.get_running_loop().run_in_executor(executor, self.factory)
        except Exception as exc:
            executor.shutdown(wait=False)
            async with self._lock:
                self._sessions.pop(session_id, None)
            raise FactoryError(f"could not create the environment: {exc}") from exc
        session = Session(session_id=session_id, env=env, kind=kind, executor=executor)
        async with self._lock:
            self._sessions[session_id] = session
            self.opened += 1
        return session

    def get(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise UnknownSessionError(session_id)
        return session

    async def close(self, session_id: str, *, reaped: bool = False) -> bool:
        """Close a session and release its env; False if there was none."""
        async with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return False
            del self._sessions[session_id]
        await self._release(session)
        if reaped:
            self.reaped += 1
        self.closed += 1
        return True

    async def _release(self, session: Session) -> None:
        # Let steps already accepted finish (they take the session lock themselves),
        # then close the env on the session's own thread.
        for future in list(session.answers.values()):
            if not future.done():
                with contextlib.suppress(BaseException):
                    await future
        session.answers.clear()
        async with session.lock:
            loop = asyncio.get_running_loop()
            try:
                await loop.run_in_executor(session.executor, session.env.close)
            except Exception:  # noqa: BLE001 - closing must release the slot regardless
                log.exception("closing session %s failed", session.session_id)
        session.executor.shutdown(wait=True)

    async def shutdown(self) -> None:
        """Stop the reaper and close every session."""
        self.stop_reaper()
        for session_id in list(self._sessions):
            await self.close(session_id)

    # ------------------------------------------------------------------- calls
    async def call(self, session: Session, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` on the session's thread, one call at a time."""
        async with session.lock:
            return await self._run(session, fn, *args)

    async def _run(self, session: Session, fn: Callable[..., Any], *args: Any) -> Any:
        session.in_flight += 1
        session.touch()
        try:
            return await asyncio.get_running_loop().run_in_executor(session.executor, fn, *args)
        finally:
            session.in_flight -= 1
            session.touch()

    async def call_once(
        self,
        session: Session,
        request_id: str | None,
        fn: Callable[..., Any],
        *args: Any,
        timeout_s: float | None = None,
    ) -> Any:
        """Like :meth:`call`, but idempotent in ``request_id`` and bounded by ``timeout_s``.

        A repeated ``request_id`` returns (or waits for) the first call's answer. When
        ``timeout_s`` passes first, :class:`StepPending` is raised; the call keeps
        running and its answer stays retrievable under ``request_id`` (one is generated
        when the client gave none)."""
        if request_id is None and timeout_s is None:
            return await self.call(session, fn, *args)  # nothing to remember
        if request_id is not None and request_id in session.answers:
            future = session.answers[request_id]
            session.answers.move_to_end(request_id)
        else:
            request_id = request_id or f"auto-{uuid.uuid4().hex}"

            async def run() -> Any:
                async with session.lock:
                    return await self._run(session, fn, *args)

            future = asyncio.ensure_future(run())
            session.answers[request_id] = future
            while len(session.answers) > IDEMPOTENCY_WINDOW:
                oldest, old = next(iter(session.answers.items()))
                if not old.done():
                    break
                del session.answers[oldest]
        if timeout_s is None:
            return await asyncio.shield(future)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout_s)
        except asyncio.TimeoutError:
            raise StepPending(request_id, timeout_s) from None

    # ------------------------------------------------------------------ reaper
    def start_reaper(self) -> None:
        if self.idle_timeout_s is not None and self._reaper is None:
            self._reaper = asyncio.ensure_future(self._reap_forever())

    def stop_reaper(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None

    async def reap_idle(self) -> list[str]:
        """Close the sessions idle for longer than ``idle_timeout_s``; their ids."""
        if self.idle_timeout_s is None:
            return []
        now = time.monotonic()
        stale = [
            s.session_id
            for s in list(self._sessions.values())
            if s is not None
            and s.in_flight == 0
            and not s.lock.locked()
            and now - s.last_activity > self.idle_timeout_s
        ]
        closed = []
        for session_id in stale:
            if await self.close(session_id, reaped=True):
                closed.append(session_id)
        return closed

    async def _reap_forever(self) -> None:
        assert self.idle_timeout_s is not None
        interval = min(max(self.idle_timeout_s / 4, 0.05), 30.0)
        while True:
            await asyncio.sleep(interval)
            try:
                await self.reap_idle()
            except Exception:  # noqa: BLE001 - the reaper must keep running
                log.exception("idle-session reaper failed; retrying")
