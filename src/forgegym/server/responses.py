"""The server's error responses: JSON ``{"detail", "code"?, ...}`` with OpenEnv's
error codes (:class:`~forgegym.server.models.WSErrorCode`)."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from forgegym.server.models import WSErrorCode

__all__ = ["error_response", "invalid", "not_found"]


def error_response(status: int, code: WSErrorCode, message: str, **extra: Any) -> JSONResponse:
    """``status`` with ``{"detail": message, "code": code, **extra}``."""
    return JSONResponse(
        status_code=status, content={"detail": message, "code": code.value, **extra}
    )


def not_found(message: str) -> JSONResponse:
    """404 with ``{"detail": message}``."""
    return JSONResponse(status_code=404, content={"detail": message})


def invalid(message: str) -> JSONResponse:
    """422 with ``code: VALIDATION_ERROR``."""
    return error_response(422, WSErrorCode.VALIDATION_ERROR, message)
