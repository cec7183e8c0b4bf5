"""A policy backed by any OpenAI-compatible chat-completions endpoint.

Configured like the seeds' inference scripts: ``API_BASE_URL``, ``MODEL_NAME`` and
``API_KEY`` (or ``HF_TOKEN``). It sends ``info["messages"]`` (the episode's chat
history) through :class:`forgegym.clients.chat.ChatClient` and returns the reply text.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from forgegym.clients.chat import ChatClient, ChatError

__all__ = ["LLMPolicy", "LLMPolicyError"]

LLMPolicyError = ChatError
"""The endpoint could not be reached or answered with an error."""


@dataclass
class LLMPolicy(ChatClient):
    """A policy on a :class:`ChatClient`: sends the episode's ``info["messages"]``."""

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
        return self.complete(messages)
