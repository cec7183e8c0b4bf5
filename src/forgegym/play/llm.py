"""Old import path of :mod:`forgegym.clients.chat` (issue 35 moved the model clients to
their own layer, below ``envs``: Oversight's worker uses them); kept so that ``from
forgegym.play.llm import ChatClient`` keeps working."""

from __future__ import annotations

from forgegym.clients.chat import ChatClient, ChatError

__all__ = ["ChatClient", "ChatError"]
