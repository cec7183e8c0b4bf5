"""Refactor's actions: the shared code actions (read, list, search, edit, run_tests, lint,
plan, review, reflect, submit), as the action set its env parses. Every family names
its action set ``ACTIONS`` in ``actions.py`` (docs/design/002-family-contract.md)."""

from __future__ import annotations

from forgegym.core.actions import CODE_ACTIONS, ActionSet

__all__ = ["ACTIONS"]

#: The action set ``Forge/Refactor-v0`` parses (the code actions).
ACTIONS: ActionSet = ActionSet(CODE_ACTIONS)
