"""``examples/train_grpo.py`` keeps the forgegym telemetry without being edited: its
trainer carries ``telemetry_callback``, writing where ``forgegym plot telemetry``
reads."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "train_grpo.py"


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("train_grpo_telemetry", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_example_trainer_writes_telemetry_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("trl")
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    example = _example()
    out = tmp_path / "run"
    args = example.parse_args(
        ["--backend", "trl", "--steps", "1", "--warm-start", "none", "--output-dir", str(out)]
    )
    trainer, _, _ = example.build_trainer(args, False)
    (callback,) = [
        c
        for c in trainer.callback_handler.callbacks
        if type(c).__name__ == "ForgeTelemetryCallback"
    ]
    assert callback.path == os.fspath(out / "telemetry.jsonl")
    state = SimpleNamespace(global_step=3, is_world_process_zero=True)
    callback.on_log(None, state, None, logs={"forgegym/unparseable": 1.0, "loss": 0.5})
    (row,) = [json.loads(line) for line in (out / "telemetry.jsonl").read_text().splitlines()]
    assert row == {"step": 3.0, "forgegym/unparseable": 1.0}
