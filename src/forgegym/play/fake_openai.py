"""A scripted OpenAI-compatible server, for tests and demos of ``forgegym eval --model``.

Needs the ``serve`` extra (FastAPI, uvicorn). It speaks ``POST /v1/chat/completions`` (and ``GET /v1/models``) with FastAPI and
answers by script, chosen by the request's ``model``:

==================  ===============================================================
``fake-ref``        the task's reference solution (what validation expects to score high)
``fake-noop``       ``{"action": "submit"}``: the no-op
``fake-malformed``  prose without any JSON action (a format penalty every step)
``fake-slow``       the reference, after ``slow_s`` seconds (client timeouts)
``fake-429``        429 with ``Retry-After`` for the first ``rate_limit_failures``
                    attempts of each distinct request, then the reference
``fake-multiturn``  a harmless exploring action first (``run_tests``, or a probe where
                    the family has one), the reference on the next turn
==================  ===============================================================

How the fake knows the task (a decision): it does not parse the prompt. A
prompt carries no task id (observations are what a model sees, and an id would be
a hint), so :func:`index_tasks` plays the same resets the evaluation will play
(same ids, seeds and env kwargs) in-process, once, and keys each task's scripted
answers by a SHA-256 of its first observation. A request is matched by its user
messages: with the episode's history (``forgegym eval``'s default) the first user
message is always that first observation, so later turns of a multi-turn episode
match too. The fake is therefore an oracle for a declared set of tasks, and a prompt
it was not told about is a 400 naming the problem, never a guess.

Every answer can wait ``latency_s`` first (a model's time to answer), which is what
makes a throughput comparison of client concurrency meaningful. Token counts in
``usage`` are whitespace-separated words.

Run it by hand::

    python -m forgegym.play.fake_openai --env Forge/Oversight-v0 --episodes 8 --port 8011
    forgegym eval --env Forge/Oversight-v0 --episodes 8 --model fake-ref \\
        --base-url http://127.0.0.1:8011/v1
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

__all__ = [
    "MODELS",
    "FakeOpenAIServer",
    "TaskScript",
    "create_app",
    "index_tasks",
    "main",
    "prompt_key",
]

MODELS: tuple[str, ...] = (
    "fake-ref",
    "fake-noop",
    "fake-malformed",
    "fake-slow",
    "fake-429",
    "fake-multiturn",
)
NOOP = '```json\n{"action": "submit"}\n```'
MALFORMED = (
    "I looked at the code and I think the problem is in the loop bounds, so I would "
    "change them; let me know if you want me to write the patch."
)


class TaskScript(BaseModel):
    """What the fake answers for one task."""

    env_id: str
    task_id: str
    reference: str
    explore: str | None = None  # a harmless first action for fake-multiturn


def prompt_key(text: str) -> str:
    """The key of a first observation in the index."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _explore_action(schema: Mapping[str, Any]) -> str | None:
    """A valid action that changes nothing graded: ``run_tests`` for code families, a
    probe where the family has one (read from the action JSON schema)."""
    actions: set[str] = set()
    for definition in dict(schema.get("$defs") or {}).values():
        action = dict(definition.get("properties") or {}).get("action") or {}
        if isinstance(action.get("const"), str):
            actions.add(action["const"])
    if "run_tests" in actions:
        return '```json\n{"action": "run_tests"}\n```'
    if "probe" in actions:
        return '```json\n{"action": "probe", "question": "Which source supports your answer?"}\n```'
    return None


def index_tasks(
    env_ids: Iterable[str],
    *,
    episodes: int = 1,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
) -> dict[str, TaskScript]:
    """The scripts of the tasks ``forgegym eval --env ID --episodes N --seed S`` plays.

    Resets each env with seeds ``seed .. seed + episodes - 1`` (as the evaluation does)
    and records the reference policy's action and an exploring action, keyed by
    :func:`prompt_key` of the first observation.
    """
    import gymnasium as gym

    import forgegym  # noqa: F401 - registers the ids
    from forgegym.policies import make as make_policy

    index: dict[str, TaskScript] = {}
    for env_id in env_ids:
        env = gym.make(env_id, **dict(env_kwargs or {}))
        try:
            reference = make_policy("reference", env)
            for k in range(episodes):
                observation, info = env.reset(seed=seed + k)
                index[prompt_key(observation)] = TaskScript(
                    env_id=env_id,
                    task_id=str(info["task_id"]),
                    reference=reference(observation, info),
                    explore=_explore_action(info.get("action_schema") or {}),
                )
        finally:
            env.close()
    return index


def _error(
    status: int, message: str, kind: str = "invalid_request_error", **headers: str
) -> JSONResponse:
    return JSONResponse(
        status_code=status,
        content={"error": {"message": message, "type": kind, "code": status}},
        headers=headers or None,
    )


def _words(messages: Sequence[Mapping[str, Any]]) -> int:
    return sum(len(str(m.get("content") or "").split()) for m in messages)


def create_app(
    tasks: Mapping[str, TaskScript],
    *,
    latency_s: float = 0.0,
    slow_s: float = 30.0,
    rate_limit_failures: int = 2,
) -> FastAPI:
    """The FastAPI app answering for the indexed ``tasks`` (see the module docstring)."""
    if latency_s < 0 or slow_s < 0 or rate_limit_failures < 0:
        raise ValueError("latency_s, slow_s, rate_limit_failures: expected >= 0")
    app = FastAPI(title="forgegym fake OpenAI server")
    attempts: dict[str, int] = {}
    lock = threading.Lock()
    app.state.requests = 0
    app.state.in_flight = 0  # answers being prepared now, and the most at once
    app.state.max_in_flight = 0

    def find(messages: Sequence[Mapping[str, Any]]) -> TaskScript | None:
        for message in messages:
            if message.get("role") == "user":
                script = tasks.get(prompt_key(str(message.get("content") or "")))
                if script is not None:
                    return script
        return None

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": m, "object": "model"} for m in MODELS]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        with lock:
            app.state.requests += 1
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "the body must be a JSON object")
        model, messages = body.get("model"), body.get("messages")
        if model not in MODELS:
            return _error(404, f"model {model!r} does not exist; try one of {list(MODELS)}")
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages
        ):
            return _error(400, "messages: expected a list of {role, content} objects")
        if model == "fake-429":
            digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
            with lock:
                seen = attempts[digest] = attempts.get(digest, 0) + 1
            if seen <= rate_limit_failures:
                return _error(
                    429,
                    "rate limited; retry later",
                    "rate_limit_error",
                    **{
                        "Retry-After": "0",
                        "retry-after-ms": "20",
                    },
                )
        script = find(messages)
        if model in ("fake-ref", "fake-slow", "fake-429", "fake-multiturn") and script is None:
            return _error(
                400,
                "no indexed task has this prompt: start the fake with the same --env, "
                "--episodes, --seed and env kwargs as the evaluation, and send the "
                "episode's history (the first user message must be the first observation)",
            )
        with lock:
            app.state.in_flight += 1
            app.state.max_in_flight = max(app.state.max_in_flight, app.state.in_flight)
        try:
            await asyncio.sleep(slow_s if model == "fake-slow" else latency_s)
        finally:
            with lock:
                app.state.in_flight -= 1
        if model == "fake-noop":
            text = NOOP
        elif model == "fake-malformed":
            text = MALFORMED
        elif model == "fake-multiturn":
            assert script is not None
            turn = sum(1 for m in messages if m.get("role") == "assistant")
            text = script.explore if turn == 0 and script.explore else script.reference
        else:
            assert script is not None
            text = script.reference
        prompt, completion = _words(messages), len(text.split())
        return {
            "id": f"chatcmpl-fake-{app.state.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    return app


class FakeOpenAIServer:
    """The fake app served by uvicorn on ``host`` (port 0: a free one) in a thread.

    Use as a context manager; ``url`` is the base URL to give a client (``.../v1``).
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        import uvicorn

        self.app = app
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = ""

    def __enter__(self) -> FakeOpenAIServer:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the fake OpenAI server did not start")
            time.sleep(0.02)
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=60)

    @property
    def requests(self) -> int:
        """Requests received so far (answered or not)."""
        return int(self.app.state.requests)


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's default, except where there is none to show."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m forgegym.play.fake_openai``: index tasks, then serve until Ctrl-C."""
    parser = argparse.ArgumentParser(
        prog="python -m forgegym.play.fake_openai",
        description="A scripted OpenAI-compatible server for `forgegym eval --model`: the "
        f"model name picks the script ({', '.join(MODELS)}). It indexes the tasks the "
        "evaluation will play (the same ids, episodes and seed), then serves "
        "POST /v1/chat/completions until Ctrl-C.",
        formatter_class=_HelpFormatter,
    )
    parser.add_argument(
        "--env", action="append", metavar="ID", help="env id, repeatable (default: every id)"
    )
    parser.add_argument(
        "--episodes", type=int, default=5, help="tasks per env (seeds SEED, SEED+1, ...)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the first task")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8011, help="port to listen on")
    parser.add_argument(
        "--latency", type=float, default=0.0, help="seconds to wait before each answer"
    )
    args = parser.parse_args(argv)
    from forgegym.family.registration import env_ids

    tasks = index_tasks(args.env or env_ids(), episodes=args.episodes, seed=args.seed)
    server = FakeOpenAIServer(create_app(tasks, latency_s=args.latency), args.host, args.port)
    with server:
        print(f"fake OpenAI server at {server.url} (models: {', '.join(MODELS)})", flush=True)
        try:
            while server.thread.is_alive():
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
