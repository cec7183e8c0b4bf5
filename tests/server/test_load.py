"""Load on loopback: 32 concurrent sessions x 20 steps (16 over /ws, 16 over HTTP) with
malformed payloads mixed in; afterwards no session, workspace or process is left.
Then schemathesis over the OpenAPI schema: no 5xx."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("websockets")
from websockets.asyncio.client import connect  # noqa: E402

from forgegym.sandbox.runners import ForkServerRunner, get_default_runner  # noqa: E402
from tests.server.conftest import live_server  # noqa: E402

SESSIONS = 32
STEPS = 20


def _descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    out: set[int] = set()
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in out:
                out.add(child)
                stack.append(child)
    return out


def _action(i: int, step: int) -> str:
    if step == STEPS - 1:
        return json.dumps({"action": "submit"})
    if step == 3:
        return json.dumps({"action": "run_tests"})
    if step % 4 == 1:
        return f"not json from session {i}"  # a format penalty, not an error
    return json.dumps({"action": "plan", "text": f"session {i} step {step}: read the tests"})


async def _ws_session(url: str, i: int) -> list[dict[str, Any]]:
    replies = []
    async with connect(url.replace("http", "ws") + "/ws", max_size=None) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {"seed": i}}))
        replies.append(json.loads(await ws.recv()))
        for step in range(STEPS):
            if step == 2:  # a malformed payload: an error reply, the session goes on
                await ws.send(json.dumps({"type": "step", "data": {"action": "x"}}))
                error = json.loads(await ws.recv())
                assert error["data"]["code"] == "VALIDATION_ERROR", error
            await ws.send(json.dumps({"type": "step", "data": {"text": _action(i, step)}}))
            replies.append(json.loads(await ws.recv()))
        await ws.send(json.dumps({"type": "close"}))
    return replies


async def _http_session(client: httpx.AsyncClient, i: int) -> list[dict[str, Any]]:
    episode = f"load-{i}"
    reset = await client.post("/reset", json={"seed": i, "episode_id": episode})
    replies = [{"type": "observation", "data": reset.json()}]
    for step in range(STEPS):
        if step == 2:
            bad = await client.post("/step", json={"episode_id": episode, "action": "x"})
            assert bad.status_code == 422 and bad.json()["code"] == "VALIDATION_ERROR"
        response = await client.post(
            "/step",
            json={
                "episode_id": episode,
                "action": {"text": _action(i, step)},
                "request_id": f"{episode}-{step}",
            },
        )
        assert response.status_code == 200, response.text
        replies.append({"type": "observation", "data": response.json()})
    closed = await client.post("/close", json={"episode_id": episode})
    assert closed.json()["closed"] is True
    return replies


async def _load(url: str) -> list[list[dict[str, Any]]]:
    async with httpx.AsyncClient(base_url=url, timeout=300) as client:
        jobs = [
            _ws_session(url, i) if i % 2 == 0 else _http_session(client, i) for i in range(SESSIONS)
        ]
        return await asyncio.gather(*jobs)


@pytest.mark.slow
def test_32_sessions_x_20_steps_leave_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORGEGYM_SCRATCH", str(tmp_path))
    runner = get_default_runner()
    if isinstance(runner, ForkServerRunner):
        runner.warm()  # the shared pool's zygotes exist before and after: not a leak
    baseline = len(_descendants(os.getpid()))
    with live_server(env_kwargs={"max_steps": STEPS}, max_sessions=SESSIONS) as live:
        results = asyncio.run(_load(live.url))
        assert len(results) == SESSIONS
        for replies in results:
            assert [r["type"] for r in replies] == ["observation"] * (STEPS + 1)
            last = replies[-1]["data"]
            assert last["done"] is True and "score" in last["observation"]["info"]
            assert [r["data"]["metadata"]["step"] for r in replies] == list(range(STEPS + 1))
        # A socket's session is released when the server has read the client's close,
        # which can be just after the client returned: wait for it (bounded).
        sessions = live.service.sessions
        deadline = time.monotonic() + 60
        while sessions.closed < SESSIONS and time.monotonic() < deadline:
            time.sleep(0.05)
        with httpx.Client(base_url=live.url) as client:
            health = client.get("/health").json()
        assert health["active_sessions"] == 0
        assert sessions.opened == sessions.closed == SESSIONS and sessions.reaped == 0
    assert sorted(os.listdir(tmp_path)) == []  # every workspace and grading copy removed
    assert len(_descendants(os.getpid())) <= baseline


schemathesis = pytest.importorskip("schemathesis")


def test_schemathesis_finds_no_server_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hypothesis import HealthCheck, given, settings

    from forgegym.server.app import create_app

    monkeypatch.setenv("FORGEGYM_SCRATCH", str(tmp_path))
    app = create_app("Forge/Bugfix-v0", env_kwargs={"max_steps": 2}, max_sessions=500)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    seen: dict[str, int] = {}

    def fuzz(op: Any) -> None:
        @given(case=op.as_strategy())
        @settings(
            max_examples=6, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        def check(case: Any) -> None:
            response = case.call()
            seen[op.label] = seen.get(op.label, 0) + 1
            if response.status_code >= 500:
                failures.append(f"{op.label}: {response.status_code} {response.text[:300]}")

        check()

    for operation in schema.get_all_operations():
        fuzz(operation.ok())

    asyncio.run(app.state.service.sessions.shutdown())
    app.state.service.close()
    assert not failures, failures
    assert {"POST /reset", "POST /step", "GET /state", "POST /grader", "GET /tasks"} <= set(seen)
