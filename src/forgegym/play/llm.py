"""The one OpenAI-compatible chat client.

:class:`ChatClient` sends OpenAI-style ``messages`` to a chat-completions endpoint and
returns the reply text. It talks to ``base_url`` with the standard library (no client
package needed), or through an ``openai.OpenAI``-like SDK object when one is given
(``client.chat.completions.create``). Everything in forgegym that asks a model goes
through it: :class:`forgegym.play.policies.llm.LLMPolicy` (``forgegym eval --policy llm``), the batch
:func:`forgegym.play.rollouts.openai_policy`, and Oversight's
``LLMWorker.from_openai``.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChatClient", "ChatError"]


class ChatError(RuntimeError):
    """The endpoint could not be reached or answered with an error."""


@dataclass
class ChatClient:
    """One OpenAI-compatible chat-completions client.

    Args:
        model: the model to query.
        base_url: the endpoint (``.../v1``); needed unless ``sdk`` is given.
        api_key: sent as a bearer token (standard-library path).
        sdk: an ``openai.OpenAI``-like client to send requests through instead.
        temperature, max_tokens: request parameters (``None``: left to the server).
        timeout_s: per-request timeout (standard-library path).
        extra: further request fields (``top_p``, ``stop``, ...).
    """

    model: str
    base_url: str = ""
    api_key: str = ""
    sdk: Any = None
    temperature: float | None = 0.2
    max_tokens: int | None = 2048
    timeout_s: float = 120.0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("model: the model to query is required")
        if self.sdk is None and not self.base_url:
            raise ValueError("base_url: an OpenAI-compatible endpoint is required")
        self.base_url = self.base_url.rstrip("/")

    def _params(self) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        return {**params, **self.extra}

    def complete(self, messages: Sequence[Mapping[str, str]]) -> str:
        """The reply text to ``messages`` (``""`` for an empty reply);
        :class:`ChatError` when the endpoint fails or answers oddly."""
        if self.sdk is not None:
            response = self.sdk.chat.completions.create(
                model=self.model, messages=list(messages), **self._params()
            )
            return response.choices[0].message.content or ""
        body = json.dumps({"model": self.model, "messages": list(messages), **self._params()})
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=body.encode(),
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = json.load(response)
        # URLError, timeouts and dropped connections are all OSErrors; a body that is not
        # JSON (or not UTF-8) is a ValueError.
        except (OSError, ValueError) as exc:
            raise ChatError(f"LLM endpoint {self.base_url} failed: {exc}") from exc
        try:
            return str(payload["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError) as exc:
            raise ChatError(f"unexpected response from {self.base_url}: {payload!r:.300}") from exc
