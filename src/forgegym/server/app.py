"""``forgegym serve``: one environment id over OpenEnv's HTTP/WebSocket protocol.

::

    forgegym serve Forge/Bugfix-v0 --port 8000 --max-sessions 64
    # or in Python
    from forgegym.server import create_app
    app = create_app("Forge/Bugfix-v0")      # a FastAPI app; run it with uvicorn

Endpoints (OpenEnv's, same payloads and error codes):

* ``POST /reset`` ``{"seed", "episode_id", "options"}`` -> ``{"observation", "reward",
  "done", "metadata": {"episode_id"}}``. A new ``episode_id`` opens an HTTP session;
  a known one resets it.
* ``POST /step`` ``{"episode_id", "action": {"text"}, "timeout_s", "request_id"}``.
  ``request_id`` makes a step idempotent; past ``timeout_s`` the answer is 408 and the
  step's result stays retrievable with the same ``request_id``.
* ``GET /state?episode_id=``, ``POST /close``, ``GET /schema``, ``/metadata``, ``/health``.
* ``WS /ws``: one connection = one session; messages ``{"type": "reset" | "step" |
  "state" | "close", "data": ...}``; answers ``observation`` / ``state`` / ``error``
  with ``data.code`` one of :class:`~forgegym.server.models.WSErrorCode`.
* forgegym's extras (``extras.py``): ``/tasks``, ``/grader``, ``/curriculum/*``,
  ``/{family}/stats``; the dashboard at ``/``.

Malformed payloads are 422 with ``code: VALIDATION_ERROR`` (over the socket: an
``error`` message with that code); the server keeps serving.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from forgegym.server import http_routes, ws_route
from forgegym.server.extras import add_extra_routes
from forgegym.server.models import WSErrorCode
from forgegym.server.service import ForgeService, jsonable

__all__ = ["ForgeService", "create_app", "jsonable"]

STATIC_DIR = Path(__file__).parent / "static"


def create_app(
    env_id: str,
    *,
    env_kwargs: dict[str, Any] | None = None,
    max_sessions: int = 64,
    idle_timeout_s: float | None = 600.0,
    curriculum: bool = False,
    curriculum_config: dict[str, Any] | None = None,
    results: Sequence[str | Path] = (),
) -> FastAPI:
    """The FastAPI app serving ``env_id`` (see the module docstring); ``results`` are
    the results files of the dashboard's Leaderboard tab (``GET /leaderboard``). The
    routes reach the :class:`ForgeService` as ``app.state.service``."""
    service = ForgeService(
        env_id,
        env_kwargs=env_kwargs,
        max_sessions=max_sessions,
        idle_timeout_s=idle_timeout_s,
        curriculum=curriculum,
        curriculum_config=curriculum_config,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        service.sessions.start_reaper()
        try:
            yield
        finally:
            await service.sessions.shutdown()
            service.close()

    app = FastAPI(
        title=f"forgegym: {env_id}",
        version=_version(),
        description=__doc__,
        lifespan=lifespan,
    )
    app.state.service = service
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    # The order is the routes' precedence: ``/{family}/stats`` (an extra) comes after
    # every fixed path of the same shape (``/curriculum/stats``).
    app.include_router(http_routes.router)
    app.include_router(ws_route.router)
    add_extra_routes(app)
    from forgegym.server.leaderboard import add_leaderboard_route  # play: loaded when served

    add_leaderboard_route(app, results)
    app.add_api_route("/", _index, include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
    """A malformed payload: 422 with ``code: VALIDATION_ERROR``, its errors as JSON."""
    return JSONResponse(
        status_code=422,
        content={"detail": jsonable(exc.errors()), "code": WSErrorCode.VALIDATION_ERROR.value},
    )


async def _index() -> FileResponse:
    """The dashboard."""
    return FileResponse(STATIC_DIR / "index.html")


def _version() -> str:
    from forgegym import __version__

    return __version__
