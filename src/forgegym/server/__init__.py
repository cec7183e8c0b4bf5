"""``forgegym serve``: environments over OpenEnv's HTTP/WebSocket protocol, and a dashboard.

Needs the ``serve`` extra (``pip install "forgegym[serve]"``: FastAPI, uvicorn,
websockets). See :mod:`forgegym.server.app` for the endpoints and
:class:`forgegym.server.remote.RemoteEnv` for the Gymnasium client.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app", "serve"]


def create_app(env_id: str, **kwargs: Any) -> Any:
    """The FastAPI app serving ``env_id`` (see :func:`forgegym.server.app.create_app`)."""
    from forgegym.server.app import create_app as _create_app

    return _create_app(env_id, **kwargs)


def serve(
    env_id: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "info",
    **kwargs: Any,
) -> None:
    """Run the server with uvicorn until interrupted (sessions are closed on shutdown)."""
    import uvicorn

    uvicorn.run(create_app(env_id, **kwargs), host=host, port=port, log_level=log_level)
