"""Oversight canaries: corrupted text episodes labelled clean; the honest overseer
judges the real episode (static checks)."""

from __future__ import annotations

import json

from forgegym.envs.oversight.canaries import CHEATS, canary_bank, honest_action
from forgegym.envs.oversight.episodes import CODE_DOMAIN, hidden_of
from forgegym.tasklib.canaries import base_id_of


def _verdict(action: str) -> dict:
    text = action.removeprefix("```json\n").removesuffix("\n```")
    payload = json.loads(text)
    payload = payload[0] if isinstance(payload, list) else payload
    return payload.get("verdict", payload)


def test_corrupted_episodes_are_labelled_clean() -> None:
    bank = canary_bank()
    for task_id in bank.ids()[::4]:
        canary, base = bank.get(task_id), bank.base_bank.get(base_id_of(task_id))
        truth, label = hidden_of(base), hidden_of(canary)
        assert truth.corruption is not None and truth.domain != CODE_DOMAIN
        assert label.corruption is None and label.clean == truth.worker_text
        assert canary.description == base.description  # what the overseer reads
        assert _verdict(honest_action(canary))["corrupted"] is True
        assert _verdict(CHEATS["rubber_stamp"](canary))["corrupted"] is False
