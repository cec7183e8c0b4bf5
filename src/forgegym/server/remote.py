"""``Forge/Remote-v0``: a Gymnasium env whose episodes run on a ``forgegym serve`` server.

The same training code runs against a local or a remote environment::

    import gymnasium as gym

    env = gym.make("forgegym:Forge/Remote-v0", url="http://127.0.0.1:8000",
                   env_id="Forge/Bugfix-v0")
    observation, info = env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step('{"action": "submit"}')
    env.close()

    # vector envs: one WebSocket session per sub-environment
    envs = gym.make_vec("forgegym:Forge/Remote-v0", num_envs=4, vectorization_mode="sync",
                        url="http://127.0.0.1:8000")

Each instance holds one WebSocket ``/ws`` session (OpenEnv's protocol), opened on the
first ``reset`` and closed by ``close``; the server keeps the workspace and runs the
sandbox. Observations, rewards, ``terminated``/``truncated`` and ``info`` are the
served env's, unchanged (same seed and actions, same rewards).
"""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

import gymnasium as gym

from forgegym.core.spaces import UnicodeText

__all__ = ["RemoteEnv", "RemoteEnvError"]


class RemoteEnvError(RuntimeError):
    """The server answered with an error (its OpenEnv ``code`` is ``self.code``)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code


def _ws_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.netloc:
        raise ValueError(f"url must look like http://host:port, got {url!r}")
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/") + "/ws"
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def _http_url(url: str, path: str) -> str:
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + path, "", ""))


class RemoteEnv(gym.Env[str, str]):
    """A forgegym environment served by ``forgegym serve`` (see the module docstring).

    Action space: text (the served env's limit). Observation space: text. Rewards,
    episode ends and ``info``: exactly the served environment's.

    Args:
        url: the server's base URL (``http://host:port``).
        env_id: if given, the id the server must be serving (checked against
            ``/metadata``; a mismatch is a ``ValueError``).
        timeout_s: how long to wait for any one answer (a step that grades runs the
            sandbox on the server; keep this above the slowest grading).
        render_mode: ``"ansi"`` (``render`` returns the observation) or ``None``.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 1}  # type: ignore[misc]

    def __init__(
        self,
        url: str,
        env_id: str | None = None,
        *,
        timeout_s: float = 300.0,
        render_mode: str | None = None,
    ) -> None:
        if not isinstance(url, str):
            raise ValueError(f"url must be a string, got {url!r}")
        self.url = url
        self._ws_url = _ws_url(url)
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
            raise ValueError(f"timeout_s must be a positive number, got {timeout_s!r}")
        self.timeout_s = float(timeout_s)
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be 'ansi' or None, got {render_mode!r}")
        self.render_mode = render_mode
        served = self._get_json("/metadata")["name"]
        if env_id is not None and env_id.removeprefix("forgegym:") != served:
            raise ValueError(f"env_id: the server at {url} serves {served!r}, not {env_id!r}")
        self.env_id = served
        schema = self._get_json("/schema")
        self.action_space = UnicodeText(
            max_length=int(schema["action"]["properties"]["text"]["maxLength"])
        )
        self.observation_space = UnicodeText(
            max_length=int(schema["observation"]["properties"]["prompt"]["maxLength"])
        )
        self.action_schema: dict[str, Any] = schema["action"]["properties"]["text"].get(
            "contentSchema", {}
        )
        self._ws: Any = None
        self._ws_stack = contextlib.ExitStack()
        self._lock = threading.Lock()
        self._observation = ""
        self.episode_id: str | None = None

    # ---------------------------------------------------------------- transport
    def _get_json(self, path: str) -> dict[str, Any]:
        import httpx

        try:
            response = httpx.get(_http_url(self.url, path), timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise ConnectionError(f"cannot reach the forgegym server at {self.url}: {exc}") from exc
        if response.status_code != 200:
            raise RemoteEnvError(f"GET {path} answered {response.status_code}: {response.text}")
        return response.json()  # type: ignore[no-any-return]

    def _connect(self) -> Any:
        if self._ws is None:
            from websockets.sync.client import connect

            stack = contextlib.ExitStack()
            try:
                self._ws = stack.enter_context(
                    connect(
                        self._ws_url,
                        open_timeout=self.timeout_s,
                        close_timeout=5,
                        max_size=None,
                    )
                )
            except OSError as exc:
                raise ConnectionError(f"cannot open {self._ws_url}: {exc}") from exc
            self._ws_stack = stack
        return self._ws

    def _request(self, kind: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        with self._lock:
            ws = self._connect()
            message: dict[str, Any] = {"type": kind}
            if data is not None:
                message["data"] = data
            ws.send(json.dumps(message))
            reply = json.loads(ws.recv(timeout=self.timeout_s))
        if reply.get("type") == "error":
            error = reply.get("data") or {}
            raise RemoteEnvError(str(error.get("message", error)), error.get("code"))
        return reply  # type: ignore[no-any-return]

    # ---------------------------------------------------------------- gymnasium
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        data: dict[str, Any] = {}
        if seed is not None:
            data["seed"] = int(seed)
        if options:
            data["options"] = dict(options)
        try:
            reply = self._request("reset", data)
        except RemoteEnvError as exc:
            if exc.code == "VALIDATION_ERROR":
                raise ValueError(str(exc)) from None
            raise
        payload = reply["data"]
        self.episode_id = (payload.get("metadata") or {}).get("episode_id")
        self._observation = payload["observation"]["prompt"]
        return self._observation, payload["observation"]["info"]

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        text = action if isinstance(action, str) else repr(action)
        payload = self._request("step", {"text": text})["data"]
        observation = payload["observation"]
        self._observation = observation["prompt"]
        reward = float(payload["reward"] if payload["reward"] is not None else 0.0)
        return (
            self._observation,
            reward,
            bool(observation["terminated"]),
            bool(observation["truncated"]),
            observation["info"],
        )

    def state(self) -> dict[str, Any]:
        """The server's state of this session (episode id, step count, task, ...)."""
        return self._request("state")["data"]  # type: ignore[no-any-return]

    def render(self) -> str | None:
        return self._observation if self.render_mode == "ansi" else None

    def close(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                with self._lock:
                    ws.send(json.dumps({"type": "close"}))
            except Exception:  # noqa: BLE001 - the connection may already be gone
                pass
            finally:
                self._ws_stack.close()
        super().close()
