"""Unsloth loading, imported lazily and only on a CUDA GPU.

Unsloth raises at import time without an accelerator, so nothing here imports it
until :func:`load_model` has checked ``torch.cuda.is_available()``; without a GPU it
raises :class:`UnslothUnavailableError` with a one-line message.
"""

from __future__ import annotations

from typing import Any

__all__ = ["UnslothUnavailableError", "cuda_available", "load_model"]


class UnslothUnavailableError(RuntimeError):
    """Unsloth cannot be used here (no CUDA GPU, or the package is not installed)."""


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU (False when torch is missing)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def load_model(
    name: str, max_seq_length: int, lora_rank: int, load_in_4bit: bool = True
) -> tuple[Any, Any]:
    """Load ``name`` with Unsloth (4-bit by default) and add LoRA adapters.

    Returns:
        ``(model, tokenizer)`` ready for TRL's ``GRPOTrainer``.

    Raises:
        UnslothUnavailableError: no CUDA GPU, or ``unsloth`` is not installed.
        ValueError: a non-positive ``max_seq_length`` or ``lora_rank``.
    """
    if max_seq_length < 1 or lora_rank < 1:
        raise ValueError("max_seq_length and lora_rank must be >= 1")
    if not cuda_available():
        raise UnslothUnavailableError(
            "Unsloth needs a CUDA GPU accelerator, and torch.cuda.is_available() is False; "
            "use --backend trl on this machine"
        )
    try:
        from unsloth import FastLanguageModel  # heavy; patches transformers on import
    except ImportError as exc:
        raise UnslothUnavailableError(
            f"unsloth is not installed ({exc}); pip install 'forgegym[unsloth]'"
        ) from None
    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name=name, max_seq_length=max_seq_length, load_in_4bit=load_in_4bit
    )
    model = FastLanguageModel.get_peft_model(
        model,
        r=lora_rank,
        lora_alpha=lora_rank,
        target_modules=[
            "q_proj",
            "k_proj",
            "v_proj",
            "o_proj",
            "gate_proj",
            "up_proj",
            "down_proj",
        ],
        use_gradient_checkpointing="unsloth",
        random_state=0,
    )
    return model, tokenizer
