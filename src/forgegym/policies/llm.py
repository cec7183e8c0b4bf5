"""A policy backed by any OpenAI-compatible chat-completions endpoint.

Configured like the seeds' inference scripts: ``API_BASE_URL``, ``MODEL_NAME`` and
``API_KEY`` (or ``HF_TOKEN``). It sends ``info["messages"]`` (the episode's chat
history) and returns the reply text. Uses only the standard library so no client
package is required.
"""

from __future__ import annotations

import json
import os
import urllib.request
from dataclasses import dataclass
from typing import Any

__all__ = ["LLMPolicy", "LLMPolicyError"]


class LLMPolicyError(RuntimeError):
    """The endpoint could not be reached or answered with an error."""


@dataclass
class LLMPolicy:
    base_url: str
    model: str
    api_key: str = ""
    temperature: float = 0.2
    max_tokens: int = 2048
    timeout_s: float = 120.0

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMPolicy:
        base_url = overrides.pop("base_url", None) or os.environ.get("API_BASE_URL")
        model = overrides.pop("model", None) or os.environ.get("MODEL_NAME")
        if not base_url:
            raise ValueError("base_url: set API_BASE_URL to an OpenAI-compatible endpoint")
        if not model:
            raise ValueError("model: set MODEL_NAME to the model to query")
        api_key = overrides.pop("api_key", None) or os.environ.get(
            "API_KEY", os.environ.get("HF_TOKEN", "")
        )
        return cls(base_url=base_url.rstrip("/"), model=model, api_key=api_key, **overrides)

    def __call__(self, observation: str, info: dict[str, Any]) -> str:
        messages = info.get("messages") or [{"role": "user", "content": observation}]
        body = json.dumps(
            {
                "model": self.model,
                "messages": messages,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
            }
        ).encode()
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=body,
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
            raise LLMPolicyError(f"LLM endpoint {self.base_url} failed: {exc}") from exc
        try:
            return str(payload["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMPolicyError(
                f"unexpected response from {self.base_url}: {payload!r:.300}"
            ) from exc
