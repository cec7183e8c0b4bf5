"""Old import path of :mod:`forgegym.clients.async_chat` (issue 35 moved the model
clients to their own layer, below ``envs``: Oversight's worker uses them); kept so that
``from forgegym.play.client import ...`` keeps working."""

from __future__ import annotations

from forgegym.clients.async_chat import (
    AsyncChatClient,
    ChatError,
    Completion,
    CompletionCache,
    Usage,
    cache_key,
)

__all__ = ["AsyncChatClient", "ChatError", "Completion", "CompletionCache", "Usage", "cache_key"]
