"""The one OpenAI-compatible chat client, synchronous face.

:class:`ChatClient` sends OpenAI-style ``messages`` to a chat-completions endpoint and
returns the reply text. It is :class:`forgegym.clients.async_chat.AsyncChatClient` (the
``openai`` package's ``AsyncOpenAI`` with retries, backoff, rate-limit handling, an
optional completion cache and token accounting) run on a private event-loop thread,
or, when an ``openai.OpenAI``-like SDK object is given, that object's
``client.chat.completions.create``. Everything in forgegym that asks a model goes
through it: :class:`forgegym.policies.llm.LLMPolicy` (``forgegym eval --policy llm``),
the batch :func:`forgegym.play.rollouts.openai_policy`, Oversight's
``LLMWorker.from_openai``; ``forgegym eval --model`` uses the asynchronous client
directly.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forgegym.clients.async_chat import AsyncChatClient, ChatError, CompletionCache, Usage

__all__ = ["ChatClient", "ChatError"]


class _LoopThread:
    """An event loop running forever in a daemon thread (the async client's home)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="forgegym-chat", daemon=True
        )
        self.thread.start()

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


@dataclass
class ChatClient:
    """One OpenAI-compatible chat-completions client (blocking calls).

    Args:
        model: the model to query.
        base_url: the endpoint (``.../v1``); needed unless ``sdk`` is given.
        api_key: sent as a bearer token (``"EMPTY"`` when not given, as vLLM expects).
        sdk: an ``openai.OpenAI``-like client to send requests through instead.
        temperature, max_tokens: request parameters (``None``: left to the server).
        timeout_s: per-request timeout.
        extra: further request fields (``top_p``, ``stop``, ...).
        max_retries: retries on rate limits, timeouts and server errors.
        cache: a completion cache (:class:`~forgegym.clients.async_chat.CompletionCache` or a
            path): a repeated request is answered from disk.
    """

    model: str
    base_url: str = ""
    api_key: str = ""
    sdk: Any = None
    temperature: float | None = 0.2
    max_tokens: int | None = 2048
    timeout_s: float = 120.0
    extra: Mapping[str, Any] = field(default_factory=dict)
    max_retries: int = 4
    cache: CompletionCache | str | Path | None = None

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("model: the model to query is required")
        if self.sdk is None and not self.base_url:
            raise ValueError("base_url: an OpenAI-compatible endpoint is required")
        self.base_url = self.base_url.rstrip("/")
        self._client: AsyncChatClient | None = None
        self._thread: _LoopThread | None = None
        self._start = threading.Lock()

    def _params(self) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        return {**params, **self.extra}

    def _async(self) -> tuple[AsyncChatClient, _LoopThread]:
        with self._start:
            if self._client is None or self._thread is None:
                self._client = AsyncChatClient(
                    model=self.model,
                    base_url=self.base_url,
                    api_key=self.api_key,
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                    extra=dict(self.extra),
                    concurrency=64,  # callers' threads are the limit
                    max_retries=self.max_retries,
                    timeout_s=self.timeout_s,
                    cache=self.cache,
                )
                self._thread = _LoopThread()
            return self._client, self._thread

    @property
    def usage(self) -> Usage:
        """Requests, retries, cache hits and tokens so far (the HTTP path)."""
        return self._client.usage if self._client is not None else Usage()

    def complete(self, messages: Sequence[Mapping[str, str]]) -> str:
        """The reply text to ``messages`` (``""`` for an empty reply);
        :class:`ChatError` when the endpoint fails or answers oddly."""
        if self.sdk is not None:
            try:
                response = self.sdk.chat.completions.create(
                    model=self.model, messages=list(messages), **self._params()
                )
                return response.choices[0].message.content or ""
            except (AttributeError, IndexError, TypeError) as exc:
                raise ChatError(f"unexpected response from the sdk client: {exc}") from exc
        client, thread = self._async()
        return str(thread.run(client.complete(messages)).text)
