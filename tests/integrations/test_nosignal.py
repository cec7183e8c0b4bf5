"""NoSignalCallback: a warning, once per step, when a GRPO step had nothing to learn from."""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("transformers")

from forgegym.integrations.nosignal import (  # noqa: E402
    NoSignalCallback,
    NoSignalWarning,
    no_signal_reasons,
)


def _log(callback: NoSignalCallback, step: int, logs: dict[str, Any]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        callback.on_log(SimpleNamespace(), SimpleNamespace(global_step=step), None, logs=logs)
    return [str(w.message) for w in caught if issubclass(w.category, NoSignalWarning)]


def test_a_step_with_zero_reward_std_and_grad_norm_warns_once_with_advice() -> None:
    callback = NoSignalCallback()
    logs = {"reward": -0.222, "reward_std": 0.0, "grad_norm": 0.0, "loss": 0.0}
    (message,) = _log(callback, 1, logs)
    assert "step 1" in message and "reward_std 0" in message and "grad_norm 0" in message
    assert "--warm-start sft" in message and "max_completion_length" in message
    assert _log(callback, 1, logs) == []  # the same step logged again: no second warning
    assert len(_log(callback, 2, logs)) == 1  # the next step warns again
    assert callback.warned_steps == [1, 2]


@pytest.mark.parametrize(
    ("logs", "expected"),
    [
        ({"reward_std": 0.4, "frac_reward_zero_std": 0.5, "grad_norm": 1.1}, []),
        ({"reward_std": 0.0, "grad_norm": 0.7}, ["reward_std"]),
        ({"reward_std": 0.3, "grad_norm": 0.0}, ["grad_norm"]),
        # every group flat although the batch's std is not: no advantage anywhere
        ({"reward_std": 0.5, "frac_reward_zero_std": 1.0, "grad_norm": 0.2}, ["frac_reward"]),
        ({"loss": 6.9, "learning_rate": 3e-3}, []),  # an SFT step: nothing to judge
        ({"reward_std": float("nan"), "grad_norm": None}, []),
    ],
)
def test_reasons(logs: dict[str, Any], expected: list[str]) -> None:
    reasons = no_signal_reasons(logs)
    assert len(reasons) == len(expected)
    for reason, start in zip(reasons, expected, strict=True):
        assert reason.startswith(start)


def test_a_step_with_signal_does_not_warn() -> None:
    callback = NoSignalCallback()
    assert _log(callback, 1, {"reward_std": 0.42, "grad_norm": 0.29}) == []
    assert _log(callback, 2, {}) == [] and callback.warned_steps == []


def test_it_is_a_transformers_callback_the_trainer_calls() -> None:
    from transformers import TrainerCallback
    from transformers.trainer_callback import CallbackHandler, TrainerControl, TrainerState

    callback = NoSignalCallback()
    assert isinstance(callback, TrainerCallback)
    handler = CallbackHandler([callback], None, None, None, None)
    state = TrainerState()
    state.global_step = 3
    with pytest.warns(NoSignalWarning, match="step 3"):
        handler.on_log(SimpleNamespace(), state, TrainerControl(), {"grad_norm": 0.0})
