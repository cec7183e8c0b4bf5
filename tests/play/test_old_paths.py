"""The paths ``play`` had before issue 35 split it still import, and give the very
objects the new homes define (``policies``, ``policies.verify``, ``clients``)."""

from __future__ import annotations

import importlib

import pytest

MOVED = {
    "forgegym.play.policies": (
        "forgegym.policies",
        ["NOOP_ACTION", "Policy", "available_policies", "make", "policy_names"],
    ),
    "forgegym.play.verify": (
        "forgegym.policies.verify",
        ["NOOP_MAX", "REFERENCE_MIN", "TaskCheck", "VerifySummary", "check_task", "verify_tasks"],
    ),
    "forgegym.play.client": (
        "forgegym.clients.async_chat",
        ["AsyncChatClient", "ChatError", "Completion", "CompletionCache", "Usage", "cache_key"],
    ),
    "forgegym.play.llm": ("forgegym.clients.chat", ["ChatClient", "ChatError"]),
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_re_exports_the_new_objects(old: str) -> None:
    new, names = MOVED[old]
    before, after = importlib.import_module(old), importlib.import_module(new)
    assert sorted(before.__all__) == sorted(names)
    for name in names:
        assert getattr(before, name) is getattr(after, name), name
