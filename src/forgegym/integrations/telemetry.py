"""The training telemetry callback: the ``forgegym/*`` keys the reward functions log,
kept per step and appended to a JSON-lines file (``forgegym plot telemetry`` draws it)."""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["telemetry_callback"]


def telemetry_callback(path: str | os.PathLike[str] | None = None) -> Any:
    """A ``transformers.TrainerCallback`` keeping the ``forgegym/*`` telemetry the
    reward functions log each step (``forgegym/cheat_rate``, ``forgegym/gate/<name>``,
    ``forgegym/hack/<kind>``, ``forgegym/unparseable``, ``forgegym/reward_invalid``).

    Its ``history`` holds one ``{"step": ..., key: value}`` row per logging step; with
    ``path``, each row is also appended to that JSON-lines file as it comes (what
    ``forgegym plot telemetry`` draws). Pass it as ``GRPOTrainer(callbacks=[...])``."""
    from transformers import TrainerCallback

    class ForgeTelemetryCallback(TrainerCallback):  # type: ignore[misc]
        """Collects the ``forgegym/`` keys of every ``on_log`` (main process only)."""

        def __init__(self) -> None:
            self.history: list[dict[str, float]] = []
            self.path = None if path is None else os.fspath(path)

        def on_log(
            self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
        ) -> None:
            if not logs or not getattr(state, "is_world_process_zero", True):
                return
            row = {k: float(v) for k, v in logs.items() if k.startswith("forgegym/")}
            if not row:
                return
            row = {"step": float(state.global_step), **row}
            self.history.append(row)
            if self.path is not None:
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")

    return ForgeTelemetryCallback()
