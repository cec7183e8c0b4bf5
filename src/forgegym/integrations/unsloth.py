"""Unsloth loading, imported lazily and only on a CUDA GPU.

Unsloth (2026.10) patches transformers, peft and TRL when it is imported, and warns
``Unsloth should be imported before [trl, transformers, peft]`` otherwise; imported
first, its own GRPO trainer replaces TRL's. Without a GPU it does not raise: it prints
``no GPU found, training on CPU`` and falls back to a slow CPU mode (unless
``UNSLOTH_DISABLE_CPU_FALLBACK=1``). forgegym therefore never imports it on a machine
without CUDA: :func:`load_model` and :func:`import_unsloth_first` check
``torch.cuda.is_available()`` first and raise :class:`UnslothUnavailableError` with a
one-line message.

Unsloth's patched ``GRPOConfig`` has defaults of its own (learning rate 5e-5,
gradient accumulation 2, ...). A script that wants the same run on both backends sets
every such field explicitly; ``examples/train_grpo.py`` does, and prints the effective
config read back from the trainer.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["UnslothUnavailableError", "cuda_available", "import_unsloth_first", "load_model"]

#: Modules Unsloth must be imported before (it patches them on import).
PATCHED_MODULES = ("trl", "transformers", "peft")


class UnslothUnavailableError(RuntimeError):
    """Unsloth cannot be used here (no CUDA GPU, or the package is not installed)."""


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU (False when torch is missing)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _require_gpu() -> None:
    if not cuda_available():
        raise UnslothUnavailableError(
            "Unsloth needs a CUDA GPU accelerator, and torch.cuda.is_available() is False; "
            "use --backend trl on this machine"
        )


def import_unsloth_first() -> Any:
    """Import ``unsloth`` before trl/transformers/peft, as Unsloth requires.

    Returns the module. Raises :class:`UnslothUnavailableError` without a CUDA GPU, when
    the package is missing, or when one of the modules it patches was already imported
    (its optimisations would then silently not apply).
    """
    _require_gpu()
    if "unsloth" in sys.modules:
        return sys.modules["unsloth"]
    early = [name for name in PATCHED_MODULES if name in sys.modules]
    if early:
        raise UnslothUnavailableError(
            f"{', '.join(early)} imported before unsloth; import forgegym.integrations.unsloth "
            "and call import_unsloth_first() before anything that imports them"
        )
    # Never fall back to Unsloth's CPU mode: a GPU was checked above.
    os.environ.setdefault("UNSLOTH_DISABLE_CPU_FALLBACK", "1")
    try:
        import unsloth
    except ImportError as exc:
        raise UnslothUnavailableError(
            f"unsloth is not installed ({exc}); pip install 'forgegym[unsloth]'"
        ) from None
    return unsloth


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
    _require_gpu()
    if "unsloth" not in sys.modules:
        import_unsloth_first()
    from unsloth import FastLanguageModel  # heavy; patches transformers on import

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
