"""``WS /ws``: one connection is one session; messages ``{"type": "reset" | "step" |
"state" | "close", "data": ...}``, answered with ``observation`` / ``state`` / ``error``
messages whose ``data.code`` is a :class:`~forgegym.server.models.WSErrorCode`. A
malformed message is an ``error`` and the connection keeps serving."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forgegym.server.models import MAX_ID_CHARS, ForgeAction, WSErrorCode
from forgegym.server.service import ForgeService, jsonable
from forgegym.server.sessions import CapacityError, FactoryError, Session

__all__ = ["router"]

router = APIRouter()


class _WSReset(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    episode_id: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    options: dict[str, Any] | None = None


@router.websocket("/ws")
async def ws(websocket: WebSocket) -> None:
    """One session for the connection's lifetime, closed with it."""
    service: ForgeService = websocket.app.state.service
    sessions = service.sessions
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
