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
import inspect
import json
import math
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
from fastapi import Body, FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forgegym.server.models import (
    MAX_ID_CHARS,
    EnvironmentMetadata,
    ForgeAction,
    ForgeObservation,
    ForgeState,
    HealthResponse,
    ResetRequest,
    ResetResponse,
    SchemaResponse,
    SessionCloseRequest,
    StepRequest,
    StepResponse,
    WSErrorCode,
)
from forgegym.server.sessions import (
    CapacityError,
    FactoryError,
    Session,
    SessionManager,
    StepPending,
    UnknownSessionError,
)

__all__ = ["ForgeService", "create_app", "jsonable"]

STATIC_DIR = Path(__file__).parent / "static"


def jsonable(value: Any, _depth: int = 0) -> Any:
    """``value`` as strict JSON data: numpy scalars unwrapped, models dumped, non-finite
    floats as ``None`` (a response must never fail to serialise)."""
    if _depth > 64:
        return str(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, _depth + 1) for v in value]
    if isinstance(value, BaseModel):
        return jsonable(value.model_dump(mode="json"), _depth + 1)
    item = getattr(value, "item", None)
    if callable(item):  # numpy scalar
        with contextlib.suppress(Exception):
            return jsonable(item(), _depth + 1)
    tolist = getattr(value, "tolist", None)
    if callable(tolist):  # numpy array
        with contextlib.suppress(Exception):
            return jsonable(tolist(), _depth + 1)
    return str(value)


class _WSReset(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    episode_id: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    options: dict[str, Any] | None = None


class ForgeService:
    """The environment behind the endpoints: sessions, schema, metadata, grading env.

    Args:
        env_id: a registered forgegym id.
        env_kwargs: keyword arguments for ``gym.make``.
        max_sessions: the session cap (HTTP and WebSocket together).
        idle_timeout_s: idle sessions are closed after this long (``None``: never).
        curriculum: let a shared pass@k scheduler pick every session's tasks (seeded
            resets then follow the scheduler, not the seed); enables ``/curriculum/*``.
        curriculum_config: :class:`~forgegym.curricula.CurriculumConfig` fields.
    """

    def __init__(
        self,
        env_id: str,
        *,
        env_kwargs: dict[str, Any] | None = None,
        max_sessions: int = 64,
        idle_timeout_s: float | None = 600.0,
        curriculum: bool = False,
        curriculum_config: dict[str, Any] | None = None,
    ) -> None:
        import forgegym  # noqa: F401  (registers the ids)

        if env_id not in gym.registry:
            from forgegym.family.registration import env_ids

            raise ValueError(f"env_id: {env_id!r} is not registered; known: {env_ids()}")
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        probe = gym.make(env_id, **self.env_kwargs)
        try:
            base = probe.unwrapped
            _, info = probe.reset(seed=0)
            self.family: str = str(info.get("family", getattr(base, "family", "")))
            self.task_bank = getattr(base, "task_bank", None)
            self.action_max_chars = int(probe.action_space.max_length)  # type: ignore[attr-defined]
            self.observation_max_chars = int(probe.observation_space.max_length)  # type: ignore[attr-defined]
            self.action_schema: dict[str, Any] = jsonable(info.get("action_schema") or {})
            self.doc = inspect.getdoc(type(base)) or env_id
        finally:
            probe.close()
        self.scheduler: Any = None
        if curriculum:
            from forgegym.curricula import CurriculumScheduler

            if self.task_bank is None:
                raise ValueError(f"curriculum: {env_id} has no task bank to schedule")
            self.scheduler = CurriculumScheduler(self.task_bank, curriculum_config)
        self.sessions = SessionManager(
            self._make_env, max_sessions=max_sessions, idle_timeout_s=idle_timeout_s
        )
        self._grader_env: gym.Env[Any, Any] | None = None
        self._grader_lock = threading.Lock()

    # ---------------------------------------------------------------- envs
    def _make_env(self) -> gym.Env[Any, Any]:
        env = gym.make(self.env_id, **self.env_kwargs)
        if self.scheduler is not None:
            from forgegym.curricula import PassAtKCurriculum

            env = PassAtKCurriculum(env, scheduler=self.scheduler)
        return env

    def grader_env(self) -> gym.Env[Any, Any]:
        """A single-turn env for ``/grader`` (call under ``grader_lock``)."""
        if self._grader_env is None:
            kwargs = {**self.env_kwargs, "max_steps": 1}
            self._grader_env = gym.make(self.env_id, **kwargs)
        return self._grader_env

    @property
    def grader_lock(self) -> threading.Lock:
        return self._grader_lock

    def close(self) -> None:
        with self._grader_lock:
            if self._grader_env is not None:
                self._grader_env.close()
                self._grader_env = None

    # ------------------------------------------------------------- payloads
    def schema(self) -> SchemaResponse:
        action = ForgeAction.model_json_schema()
        text = action["properties"]["text"]
        text["maxLength"] = self.action_max_chars
        text["contentMediaType"] = "application/json"
        text["contentSchema"] = self.action_schema
        observation = ForgeObservation.model_json_schema()
        observation["properties"]["prompt"]["maxLength"] = self.observation_max_chars
        return SchemaResponse(
            action=action, observation=observation, state=ForgeState.model_json_schema()
        )

    def metadata(self) -> EnvironmentMetadata:
        from forgegym import __version__

        return EnvironmentMetadata(
            name=self.env_id,
            description=self.doc.split("\n\n", 1)[0].replace("\n", " "),
            readme_content=self.doc,
            version=__version__,
            author="forgegym",
        )

    def state(self, session: Session) -> ForgeState:
        info = session.last_info
        return ForgeState(
            episode_id=session.session_id,
            step_count=session.step_count,
            env_id=self.env_id,
            task_id=info.get("task_id"),
            family=info.get("family", self.family),
            difficulty=info.get("difficulty"),
            max_steps=info.get("max_steps"),
            done=session.done,
            total_reward=session.total_reward,
        )

    # --------------------------------------------------------------- actions
    async def reset(
        self, session: Session, seed: int | None, options: dict[str, Any] | None
    ) -> dict[str, Any]:
        def run() -> tuple[str, dict[str, Any]]:
            return session.env.reset(seed=seed, options=options)

        prompt, info = await self.sessions.call(session, run)
        session.step_count = 0
        session.total_reward = 0.0
        session.done = False
        session.last_info = jsonable(info)
        obs = ForgeObservation(prompt=prompt, info=session.last_info)
        return _envelope(obs, session)

    def _step_fn(self, session: Session, text: str) -> Callable[[], dict[str, Any]]:
        def run() -> dict[str, Any]:
            if not session.last_info:
                raise RuntimeError("call reset before step")
            prompt, reward, terminated, truncated, info = session.env.step(text)
            session.step_count += 1
            session.total_reward += float(reward)
            session.done = bool(terminated or truncated)
            session.last_info = jsonable(info)
            obs = ForgeObservation(
                prompt=prompt,
                info=session.last_info,
                terminated=bool(terminated),
                truncated=bool(truncated),
                done=session.done,
                reward=float(reward),
            )
            return _envelope(obs, session)

        return run

    async def step(
        self,
        session: Session,
        action: ForgeAction,
        *,
        request_id: str | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        return await self.sessions.call_once(
            session, request_id, self._step_fn(session, action.text), timeout_s=timeout_s
        )


def _envelope(obs: ForgeObservation, session: Session) -> dict[str, Any]:
    """OpenEnv's ``serialize_observation``: reward/done/metadata beside the observation."""
    return {
        "observation": obs.model_dump(exclude={"reward", "done", "metadata"}),
        "reward": obs.reward,
        "done": obs.done,
        "metadata": {"episode_id": session.session_id, "step": session.step_count},
    }


def _error(status: int, code: WSErrorCode, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse(
        status_code=status, content={"detail": message, "code": code.value, **extra}
    )


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
    the results files of the dashboard's Leaderboard tab (``GET /leaderboard``)."""
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
    sessions = service.sessions

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            status_code=422,
            content={"detail": jsonable(exc.errors()), "code": WSErrorCode.VALIDATION_ERROR.value},
        )

    def _http_session(episode_id: str) -> Session:
        """An HTTP session (a WebSocket's session belongs to its connection)."""
        session = sessions.get(episode_id)
        if session.kind != "http":
            raise UnknownSessionError(episode_id)
        return session

    # ------------------------------------------------------------ HTTP
    @app.post("/reset", response_model=ResetResponse, tags=["Environment Control"])
    async def reset(request: ResetRequest = Body(default_factory=ResetRequest)) -> Any:
        created = False
        try:
            if request.episode_id is not None and request.episode_id in sessions.ids():
                session = _http_session(request.episode_id)
            else:
                session = await sessions.open(request.episode_id, kind="http")
                created = True
        except CapacityError as exc:
            return _error(
                503,
                WSErrorCode.CAPACITY_REACHED,
                str(exc),
                active_sessions=exc.active,
                max_sessions=exc.max_sessions,
            )
        except FactoryError as exc:
            return _error(500, WSErrorCode.FACTORY_ERROR, str(exc))
        except (ValueError, UnknownSessionError) as exc:  # being opened, or a socket's
            return _error(409, WSErrorCode.SESSION_ERROR, str(exc))
        try:
            return await service.reset(session, request.seed, request.options)
        except ValueError as exc:
            if created:
                await sessions.close(session.session_id)
            return _error(422, WSErrorCode.VALIDATION_ERROR, str(exc))

    @app.post(
        "/step",
        response_model=StepResponse,
        tags=["Environment Control"],
        responses={404: {"description": "unknown episode_id"}, 408: {"description": "timeout"}},
    )
    async def step(request: StepRequest) -> Any:
        try:
            session = _http_session(request.episode_id)
        except UnknownSessionError as exc:
            return _error(404, WSErrorCode.SESSION_ERROR, str(exc))
        try:
            return await service.step(
                session, request.action, request_id=request.request_id, timeout_s=request.timeout_s
            )
        except StepPending as exc:
            return _error(408, WSErrorCode.EXECUTION_ERROR, str(exc), request_id=exc.request_id)

    @app.get("/state", response_model=ForgeState, tags=["State Management"])
    async def state(episode_id: str = Query(min_length=1, max_length=MAX_ID_CHARS)) -> Any:
        try:
            return service.state(_http_session(episode_id))
        except UnknownSessionError as exc:
            return _error(404, WSErrorCode.SESSION_ERROR, str(exc))

    @app.post("/close", tags=["Environment Control"])
    async def close(request: SessionCloseRequest) -> Any:
        try:
            _http_session(request.episode_id)
        except UnknownSessionError as exc:
            return _error(404, WSErrorCode.SESSION_ERROR, str(exc))
        if not await sessions.close(request.episode_id):
            return _error(
                404, WSErrorCode.SESSION_ERROR, str(UnknownSessionError(request.episode_id))
            )
        return {"episode_id": request.episode_id, "closed": True}

    @app.get("/schema", response_model=SchemaResponse, tags=["Schema"])
    async def schema() -> Any:
        return service.schema()

    @app.get("/metadata", response_model=EnvironmentMetadata, tags=["Environment Info"])
    async def metadata() -> Any:
        return service.metadata()

    @app.get("/health", response_model=HealthResponse, tags=["Health"])
    async def health() -> Any:
        return HealthResponse(active_sessions=sessions.active, max_sessions=sessions.max_sessions)

    # ------------------------------------------------------------ WebSocket
    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            session = await sessions.open(kind="ws")
        except CapacityError as exc:
            await _ws_send_error(
                websocket,
                WSErrorCode.CAPACITY_REACHED,
                str(exc),
                active_sessions=exc.active,
                max_sessions=exc.max_sessions,
            )
            await _ws_close(websocket)
            return
        except FactoryError as exc:
            await _ws_send_error(websocket, WSErrorCode.FACTORY_ERROR, str(exc))
            await _ws_close(websocket)
            return
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                raw = message.get("text")
                if raw is None:
                    raw = (message.get("bytes") or b"").decode("utf-8", "replace")
                if session.session_id not in sessions.ids():  # reaped while idle
                    await _ws_send_error(
                        websocket,
                        WSErrorCode.SESSION_ERROR,
                        "the session was closed (idle timeout or server shutdown); "
                        "open a new connection",
                    )
                    break
                reply = await _ws_handle(service, session, raw)
                if reply is None:
                    break
                await websocket.send_text(json.dumps(reply))
        except WebSocketDisconnect:
            pass
        finally:
            await sessions.close(session.session_id)
            await _ws_close(websocket)

    # ------------------------------------------------------------ extras, dashboard
    from forgegym.server.extras import add_extra_routes

    add_extra_routes(app, service)
    from forgegym.server.leaderboard import add_leaderboard_route

    add_leaderboard_route(app, results)

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


async def _ws_handle(service: ForgeService, session: Session, raw: str) -> dict[str, Any] | None:
    """One WebSocket message -> its reply (``None``: the client closed the session)."""
    try:
        message = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        return _ws_error(WSErrorCode.INVALID_JSON, f"Invalid JSON: {exc}")
    if not isinstance(message, dict):
        return _ws_error(WSErrorCode.VALIDATION_ERROR, "a message must be a JSON object")
    kind = message.get("type", "")
    unknown = set(message) - {"type", "data"}
    if unknown:
        return _ws_error(WSErrorCode.VALIDATION_ERROR, f"unknown message fields {sorted(unknown)}")
    data = message.get("data", {})
    try:
        if kind == "reset":
            params = _WSReset.model_validate(data if data is not None else {})
            try:
                return {
                    "type": "observation",
                    "data": await service.reset(session, params.seed, params.options),
                }
            except ValueError as exc:
                return _ws_error(WSErrorCode.VALIDATION_ERROR, str(exc))
        if kind == "step":
            action = ForgeAction.model_validate(data)
            if not session.last_info:
                return _ws_error(WSErrorCode.EXECUTION_ERROR, "call reset before step")
            return {"type": "observation", "data": await service.step(session, action)}
        if kind == "state":
            return {"type": "state", "data": service.state(session).model_dump(mode="json")}
        if kind == "close":
            return None
        return _ws_error(WSErrorCode.UNKNOWN_TYPE, f"Unknown message type: {kind!r}")
    except ValidationError as exc:
        return _ws_error(
            WSErrorCode.VALIDATION_ERROR, "Invalid message", errors=jsonable(exc.errors())
        )
    except Exception as exc:  # noqa: BLE001 - a failed step must not end the connection
        return _ws_error(WSErrorCode.EXECUTION_ERROR, f"{type(exc).__name__}: {exc}")


def _ws_error(code: WSErrorCode, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "data": {"message": message, "code": code.value, **extra}}


async def _ws_send_error(
    websocket: WebSocket, code: WSErrorCode, message: str, **extra: Any
) -> None:
    with contextlib.suppress(Exception):
        await websocket.send_text(json.dumps(_ws_error(code, message, **extra)))


async def _ws_close(websocket: WebSocket) -> None:
    with contextlib.suppress(Exception):
        await websocket.close()


def _version() -> str:
    from forgegym import __version__

    return __version__
