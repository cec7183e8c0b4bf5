"""A live ``forgegym serve`` on loopback for the server, client and browser tests."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import uvicorn  # noqa: E402

from forgegym.server.app import create_app  # noqa: E402

#: One small, fast configuration of the first family shipped with forgegym.
SERVED_ENV = "Forge/Bugfix-v0"


class LiveServer:
    """uvicorn serving ``app`` on 127.0.0.1 (an ephemeral port) in a thread."""

    def __init__(self, app: Any) -> None:
        self.app = app
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=60)

    @property
    def service(self) -> Any:
        return self.app.state.service


@contextlib.contextmanager
def live_server(env_id: str = SERVED_ENV, **kwargs: Any) -> Iterator[LiveServer]:
    with LiveServer(create_app(env_id, **kwargs)) as server:
        yield server


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live_server(env_kwargs={"max_steps": 4}, max_sessions=40) as live:
        yield live
