"""OpenEnv's wire protocol over a live server: an episode over /ws and over the Remote env
has the in-process env's rewards; HTTP sessions, idempotency, timeouts, errors, the cap
and the reaper."""

from __future__ import annotations

import json
import time
from typing import Any

import gymnasium as gym
import httpx
import pytest
from gymnasium.utils.env_checker import check_env

pytest.importorskip("websockets")
from websockets.sync.client import connect  # noqa: E402

import forgegym  # noqa: E402,F401
from forgegym.policies import make as make_policy  # noqa: E402
from tests.server.conftest import SERVED_ENV, live_server  # noqa: E402

SEED = 3


def _script(max_steps: int) -> list[str]:
    """A malformed action, a test run, then the task's reference fix (graded)."""
    env = gym.make(SERVED_ENV, max_steps=max_steps)
    try:
        observation, info = env.reset(seed=SEED)
        reference = make_policy("reference", env)(observation, info)
    finally:
        env.close()
    return ["this is not an action", json.dumps({"action": "run_tests"}), reference]


def _in_process(actions: list[str], max_steps: int) -> list[tuple[Any, ...]]:
    env = gym.make(SERVED_ENV, max_steps=max_steps)
    try:
        observation, info = env.reset(seed=SEED)
        out: list[tuple[Any, ...]] = [(observation, info["task_id"])]
        for action in actions:
            observation, reward, terminated, truncated, info = env.step(action)
            out.append((observation, reward, terminated, truncated, info.get("score")))
        return out
    finally:
        env.close()


def test_ws_episode_matches_in_process(server: Any) -> None:
    actions = _script(max_steps=4)
    expected = _in_process(actions, max_steps=4)
    ws_url = server.url.replace("http", "ws") + "/ws"
    with connect(ws_url, max_size=None) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": SEED}}))
        reply = json.loads(ws.recv(timeout=60))
        assert reply["type"] == "observation"
        assert reply["data"]["observation"]["prompt"] == expected[0][0]
        assert reply["data"]["observation"]["info"]["task_id"] == expected[0][1]
        assert reply["data"]["done"] is False and reply["data"]["reward"] is None
        got = []
        for action in actions:
            ws.send(json.dumps({"type": "step", "data": {"text": action}}))
            reply = json.loads(ws.recv(timeout=120))
            assert reply["type"] == "observation", reply
            data = reply["data"]
            obs = data["observation"]
            got.append(
                (
                    obs["prompt"],
                    data["reward"],
                    obs["terminated"],
                    obs["truncated"],
                    obs["info"].get("score"),
                )
            )
            assert data["done"] == (obs["terminated"] or obs["truncated"])
        assert got == expected[1:]
        assert got[-1][2] is True and got[-1][4] > 0.5  # the fix is graded as a fix
        ws.send(json.dumps({"type": "state"}))
        state = json.loads(ws.recv(timeout=30))
        assert state["type"] == "state"
        assert state["data"]["step_count"] == len(actions) and state["data"]["done"] is True
        assert state["data"]["total_reward"] == pytest.approx(sum(g[1] for g in got))
        ws.send(json.dumps({"type": "close"}))


def test_remote_env_matches_in_process(server: Any) -> None:
    actions = _script(max_steps=4)
    expected = _in_process(actions, max_steps=4)
    env = gym.make("forgegym:Forge/Remote-v0", url=server.url, env_id=SERVED_ENV)
    try:
        check_env(env.unwrapped, skip_render_check=True)
        observation, info = env.reset(seed=SEED)
        assert (observation, info["task_id"]) == expected[0]
        got = []
        for action in actions:
            observation, reward, terminated, truncated, info = env.step(action)
            got.append((observation, reward, terminated, truncated, info.get("score")))
        assert got == expected[1:]
        assert info["success"] is True and "reward_breakdown" in info
    finally:
        env.close()


def test_remote_env_checks_the_served_id_and_url(server: Any) -> None:
    with pytest.raises(ValueError, match="env_id"):
        gym.make("forgegym:Forge/Remote-v0", url=server.url, env_id="Forge/Nope-v0")
    with pytest.raises(ValueError, match="url"):
        gym.make("forgegym:Forge/Remote-v0", url="not a url")
    env = gym.make("forgegym:Forge/Remote-v0", url=server.url)
    try:
        with pytest.raises(ValueError, match="task_id"):
            env.reset(options={"task_id": "no/such/task"})
    finally:
        env.close()


def test_async_vector_env_over_remote(server: Any) -> None:
    seeds = [11, 12]
    local = gym.make_vec(SERVED_ENV, num_envs=2, vectorization_mode="sync", max_steps=4)
    try:
        local_obs, local_info = local.reset(seed=seeds)
        local_step = local.step([json.dumps({"action": "submit"})] * 2)
    finally:
        local.close()
    envs = gym.make_vec(
        "forgegym:Forge/Remote-v0", num_envs=2, vectorization_mode="async", url=server.url
    )
    try:
        obs, info = envs.reset(seed=seeds)
        assert list(obs) == list(local_obs)  # real text, not shared-memory placeholders
        assert list(info["task_id"]) == list(local_info["task_id"])
        _, rewards, terminated, _, _ = envs.step([json.dumps({"action": "submit"})] * 2)
        assert list(rewards) == pytest.approx(list(local_step[1]))
        assert list(terminated) == list(local_step[2])
    finally:
        envs.close()


def test_http_session_flow_and_idempotency(server: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        reset = client.post("/reset", json={"seed": SEED, "episode_id": "http-flow"})
        assert reset.status_code == 200
        body = reset.json()
        assert set(body) == {"observation", "reward", "done", "metadata"}
        assert body["metadata"]["episode_id"] == "http-flow"
        step = {"episode_id": "http-flow", "action": {"text": "oops"}, "request_id": "r-1"}
        first = client.post("/step", json=step).json()
        again = client.post("/step", json=step).json()
        assert again == first  # not stepped twice
        state = client.get("/state", params={"episode_id": "http-flow"}).json()
        assert state["step_count"] == 1 and state["total_reward"] == pytest.approx(first["reward"])
        assert first["observation"]["info"]["action_error"]
        # A submit with a deadline shorter than grading: 408, and the step's answer is
        # fetched later with the same request_id (it ran exactly once).
        submit = {
            "episode_id": "http-flow",
            "action": {"text": json.dumps({"action": "submit"})},
            "request_id": "r-2",
            "timeout_s": 0.001,
        }
        pending = client.post("/step", json=submit)
        assert pending.status_code == 408
        assert pending.json()["request_id"] == "r-2"
        submit.pop("timeout_s")
        done = client.post("/step", json=submit).json()
        assert done["done"] is True and "score" in done["observation"]["info"]
        state = client.get("/state", params={"episode_id": "http-flow"}).json()
        assert state["step_count"] == 2 and state["done"] is True
        # Reset of the same id starts a new episode in the same session.
        again = client.post("/reset", json={"seed": SEED, "episode_id": "http-flow"})
        assert again.json()["observation"] == body["observation"]
        assert client.post("/close", json={"episode_id": "http-flow"}).json()["closed"] is True
        gone = client.post("/step", json=step)
        assert gone.status_code == 404 and gone.json()["code"] == "SESSION_ERROR"


def test_http_errors_are_clear_and_leave_nothing_open(server: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        sessions = server.service.sessions
        before = set(sessions.ids("http"))
        bad = client.post("/reset", json={"options": {"task_id": "no/such/task"}})
        assert bad.status_code == 422 and "task_id" in bad.json()["detail"]
        assert bad.json()["code"] == "VALIDATION_ERROR"
        for payload in ({"seed": -1}, {"episode_id": ""}, {"surprise": 1}, [1, 2]):
            response = client.post("/reset", json=payload)
            assert response.status_code == 422, payload
            assert response.json()["code"] == "VALIDATION_ERROR"
        raw = client.post(
            "/step", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert raw.status_code == 422
        missing = client.post("/step", json={"action": {"text": "x"}})
        assert missing.status_code == 422
        assert client.get("/state").status_code == 422
        assert client.get("/state", params={"episode_id": "nope"}).status_code == 404
        assert set(sessions.ids("http")) == before
        schema = client.get("/schema").json()
        assert schema["action"]["properties"]["text"]["contentSchema"]  # the family's actions
        assert client.get("/metadata").json()["name"] == SERVED_ENV


def test_ws_errors_use_openenv_codes(server: Any) -> None:
    ws_url = server.url.replace("http", "ws") + "/ws"
    with connect(ws_url) as ws:

        def ask(raw: str) -> dict[str, Any]:
            ws.send(raw)
            return json.loads(ws.recv(timeout=60))

        assert ask("{nope")["data"]["code"] == "INVALID_JSON"
        assert ask(json.dumps({"type": "dance"}))["data"]["code"] == "UNKNOWN_TYPE"
        assert ask(json.dumps({"type": "step", "data": {"txt": "x"}}))["data"]["code"] == (
            "VALIDATION_ERROR"
        )
        early = ask(json.dumps({"type": "step", "data": {"text": "x"}}))
        assert early["data"]["code"] == "EXECUTION_ERROR" and "reset" in early["data"]["message"]
        bad = ask(json.dumps({"type": "reset", "data": {"options": {"difficulty": 99}}}))
        assert bad["data"]["code"] == "VALIDATION_ERROR" and "difficulty" in bad["data"]["message"]
        ok = ask(json.dumps({"type": "reset", "data": {"seed": 1}}))  # still serving
        assert ok["type"] == "observation"


def test_capacity_and_idle_reaper() -> None:
    with live_server(env_kwargs={"max_steps": 2}, max_sessions=1, idle_timeout_s=0.5) as live:
        ws_url = live.url.replace("http", "ws") + "/ws"
        with httpx.Client(base_url=live.url, timeout=60) as client:
            assert client.post("/reset", json={"episode_id": "a"}).status_code == 200
            full = client.post("/reset", json={"episode_id": "b"})
            assert full.status_code == 503 and full.json()["code"] == "CAPACITY_REACHED"
            with connect(ws_url) as ws:
                assert json.loads(ws.recv(timeout=30))["data"]["code"] == "CAPACITY_REACHED"
            deadline = time.monotonic() + 30
            while client.get("/health").json()["active_sessions"] and time.monotonic() < deadline:
                time.sleep(0.1)
            assert client.get("/health").json()["active_sessions"] == 0
            assert live.service.sessions.reaped == 1
            gone = client.post("/step", json={"episode_id": "a", "action": {"text": "x"}})
            assert gone.status_code == 404 and "reaped" in gone.json()["detail"]
            assert client.post("/reset", json={"episode_id": "b"}).status_code == 200
            assert client.post("/close", json={"episode_id": "b"}).json()["closed"] is True
            with connect(ws_url) as ws:  # a socket's idle session is reaped too
                ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
                assert json.loads(ws.recv(timeout=60))["type"] == "observation"
                deadline = time.monotonic() + 30
                while live.service.sessions.active and time.monotonic() < deadline:
                    time.sleep(0.1)
                ws.send(json.dumps({"type": "state"}))
                reply = json.loads(ws.recv(timeout=30))
                assert reply["data"]["code"] == "SESSION_ERROR"
            assert live.service.sessions.reaped == 2


def test_schema_lists_the_navigation_actions(server: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        schema = client.get("/schema").json()["action"]["properties"]["text"]["contentSchema"]
    names = {
        d["properties"]["action"]["const"]
        for d in schema["$defs"].values()
        if "action" in d.get("properties", {})
    }
    assert {"list", "read", "search", "edit", "run_tests", "submit"} <= names
    read, search = schema["$defs"]["ReadAction"], schema["$defs"]["SearchAction"]
    assert {"path", "start", "end"} <= set(read["properties"]) and read["required"] == [
        "action",
        "path",
    ]
    assert search["properties"]["pattern"]["maxLength"] == 200
    assert search["properties"]["regex"]["default"] is False
