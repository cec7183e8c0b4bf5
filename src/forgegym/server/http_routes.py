"""OpenEnv's HTTP endpoints: ``POST /reset``, ``POST /step``, ``GET /state``,
``POST /close`` (one HTTP session per ``episode_id``), ``GET /schema``, ``/metadata`` and
``/health``; payloads and error codes as OpenEnv's (see :mod:`forgegym.server.app`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Query

from forgegym.server.models import (
    MAX_ID_CHARS,
    EnvironmentMetadata,
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
from forgegym.server.responses import error_response
from forgegym.server.service import ForgeService, Service
from forgegym.server.sessions import (
    CapacityError,
    FactoryError,
    Session,
    StepPending,
    UnknownSessionError,
)

__all__ = ["router"]

router = APIRouter()


def _http_session(service: ForgeService, episode_id: str) -> Session:
    """An HTTP session (a WebSocket's session belongs to its connection)."""
    session = service.sessions.get(episode_id)
    if session.kind != "http":
        raise UnknownSessionError(episode_id)
    return session


@router.post("/reset", response_model=ResetResponse, tags=["Environment Control"])
async def reset(
    service: Service, request: ResetRequest = Body(default_factory=ResetRequest)
) -> Any:
    sessions = service.sessions
    created = False
    try:
        if request.episode_id is not None and request.episode_id in sessions.ids():
            session = _http_session(service, request.episode_id)
        else:
            session = await sessions.open(request.episode_id, kind="http")
            created = True
    except CapacityError as exc:
        return error_response(
            503,
            WSErrorCode.CAPACITY_REACHED,
            str(exc),
            active_sessions=exc.active,
            max_sessions=exc.max_sessions,
        )
    except FactoryError as exc:
        return error_response(500, WSErrorCode.FACTORY_ERROR, str(exc))
    except (ValueError, UnknownSessionError) as exc:  # being opened, or a socket's
        return error_response(409, WSErrorCode.SESSION_ERROR, str(exc))
    try:
        return await service.reset(session, request.seed, request.options)
    except ValueError as exc:
        if created:
            await sessions.close(session.session_id)
        return error_response(422, WSErrorCode.VALIDATION_ERROR, str(exc))


@router.post(
    "/step",
    response_model=StepResponse,
    tags=["Environment Control"],
    responses={404: {"description": "unknown episode_id"}, 408: {"description": "timeout"}},
)
async def step(service: Service, request: StepRequest) -> Any:
    try:
        session = _http_session(service, request.episode_id)
    except UnknownSessionError as exc:
        return error_response(404, WSErrorCode.SESSION_ERROR, str(exc))
    try:
        return await service.step(
            session, request.action, request_id=request.request_id, timeout_s=request.timeout_s
        )
    except StepPending as exc:
        return error_response(408, WSErrorCode.EXECUTION_ERROR, str(exc), request_id=exc.request_id)


@router.get("/state", response_model=ForgeState, tags=["State Management"])
async def state(
    service: Service, episode_id: str = Query(min_length=1, max_length=MAX_ID_CHARS)
) -> Any:
    try:
        return service.state(_http_session(service, episode_id))
    except UnknownSessionError as exc:
        return error_response(404, WSErrorCode.SESSION_ERROR, str(exc))


@router.post("/close", tags=["Environment Control"])
async def close(service: Service, request: SessionCloseRequest) -> Any:
    try:
        _http_session(service, request.episode_id)
    except UnknownSessionError as exc:
        return error_response(404, WSErrorCode.SESSION_ERROR, str(exc))
    if not await service.sessions.close(request.episode_id):
        return error_response(
            404, WSErrorCode.SESSION_ERROR, str(UnknownSessionError(request.episode_id))
        )
    return {"episode_id": request.episode_id, "closed": True}


@router.get("/schema", response_model=SchemaResponse, tags=["Schema"])
async def schema(service: Service) -> Any:
    return service.schema()


@router.get("/metadata", response_model=EnvironmentMetadata, tags=["Environment Info"])
async def metadata(service: Service) -> Any:
    return service.metadata()


@router.get("/health", response_model=HealthResponse, tags=["Health"])
async def health(service: Service) -> Any:
    sessions = service.sessions
    return HealthResponse(active_sessions=sessions.active, max_sessions=sessions.max_sessions)
