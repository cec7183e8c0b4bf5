"""The one OpenAI-compatible client: standard-library HTTP and SDK paths, errors."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import SimpleNamespace
from typing import Any

import pytest

from forgegym.clients.chat import ChatClient, ChatError
from forgegym.envs.oversight.worker import LLMWorker
from forgegym.policies.llm import LLMPolicy, LLMPolicyError

SEEN: list[dict[str, Any]] = []


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        SEEN.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if body["model"] == "broken":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"nope": 1}')
            return
        reply = {"choices": [{"message": {"content": "echo:" + body["messages"][-1]["content"]}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/"
    finally:
        server.shutdown()


def test_policy_and_worker_share_the_http_client(url: str) -> None:
    SEEN.clear()
    policy = LLMPolicy(base_url=url, model="m", api_key="k")
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    assert policy("obs", {"messages": messages}) == "echo:hi"
    assert policy("obs", {}) == "echo:obs"
    worker = LLMWorker.from_openai(url, "w", top_p=0.5)
    assert worker.chat([{"role": "user", "content": "q"}]) == "echo:q"
    first, second, third = SEEN
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer k"
    assert first["temperature"] == 0.2 and first["max_tokens"] == 2048
    assert third["model"] == "w" and third["top_p"] == 0.5 and "temperature" not in third
    assert third["auth"] == "Bearer EMPTY"


def test_endpoint_failures_are_one_error_type(url: str) -> None:
    with pytest.raises(LLMPolicyError, match="unexpected response"):
        ChatClient(base_url=url, model="broken").complete([{"role": "user", "content": "x"}])
    with pytest.raises(ChatError, match="failed"):
        ChatClient(base_url="http://127.0.0.1:9", model="m", timeout_s=5, max_retries=0).complete(
            []
        )
    for kwargs, name in (({"model": "", "base_url": url}, "model"), ({"model": "m"}, "base_url")):
        with pytest.raises(ValueError, match=name):
            ChatClient(**kwargs)


def test_an_sdk_client_is_used_when_given() -> None:
    calls: list[dict[str, Any]] = []

    def create(**kwargs: Any) -> SimpleNamespace:
        calls.append(kwargs)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=None))])

    sdk = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    client = ChatClient(model="m", sdk=sdk, max_tokens=None, extra={"seed": 3})
    assert client.complete([{"role": "user", "content": "x"}]) == ""
    assert calls == [
        {
            "model": "m",
            "messages": [{"role": "user", "content": "x"}],
            "temperature": 0.2,
            "seed": 3,
        }
    ]
