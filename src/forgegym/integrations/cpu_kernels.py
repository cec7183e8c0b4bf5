"""A plain-PyTorch LM head for TRL's trainers on machines without a GPU.

TRL 1.x patches every model it trains (``SFTTrainer`` and ``GRPOTrainer`` alike) with a
fused LM head whose per-token log-probabilities come from a Triton kernel
(``trl.kernels.ChunkedLogProbFunction``). Triton has no CPU backend: without the
``triton`` package the trainers fail (``'NoneType' object has no attribute 'apply'``),
and with it they only run under ``TRITON_INTERPRET=1``, which executes the kernel one
program instance at a time in Python: measured here, more than 90% of a tiny model's
SFT step (about 30 s of a 32 s step on a loaded 2-core machine).

:class:`TorchChunkedLogProb` computes the same outputs (log-probabilities, entropy,
``log sum p^2``, mean logit, whether the target is the argmax) with ordinary PyTorch
ops over token chunks, so autograd gives the gradients. :func:`install_cpu_lm_head`
puts it in TRL's place when no CUDA device is present; on a GPU it does nothing, so
training there uses TRL's kernel unchanged. A test checks it against the Triton
kernel (interpreted) on random inputs, outputs and gradients.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TorchChunkedLogProb", "install_cpu_lm_head"]

#: Tokens per chunk: bounds the ``[tokens, vocab]`` logits materialised at once.
TOKEN_CHUNK = 1024


def _chunk_stats(
    hidden: Any,
    weight: Any,
    bias: Any,
    targets: Any,
    temperature: float,
    softcap: float | None,
    logit_scale: float,
    outputs: tuple[str, ...],
) -> tuple[Any, ...]:
    import torch

    z = hidden.float() @ weight.float().t()
    if bias is not None:
        z = z + bias.float()
    z = z * logit_scale
    if softcap is not None:
        z = softcap * torch.tanh(z / softcap)
    z = z / temperature
    log_z = torch.logsumexp(z, dim=-1)
    target_logit = z.gather(-1, targets.long().unsqueeze(-1)).squeeze(-1)
    log_probs = target_logit - log_z
    entropy = log_sum_sq = mean_logits = is_top1 = None
    if "entropy" in outputs:
        probs = torch.softmax(z, dim=-1)
        entropy = log_z - (probs * z).sum(-1)
    if "log_sum_sq_probs" in outputs:
        log_sum_sq = torch.logsumexp(2 * (z - log_z.unsqueeze(-1)), dim=-1)
    if "mean_logits" in outputs:
        mean_logits = z.mean(-1)
    if "is_top1" in outputs:
        is_top1 = z.argmax(-1) == targets
    return log_probs, entropy, log_sum_sq, mean_logits, is_top1


class TorchChunkedLogProb:
    """Drop-in for ``trl.kernels.ChunkedLogProbFunction`` (same ``apply`` signature)."""

    @staticmethod
    def apply(
        hidden: Any,
        weight: Any,
        bias: Any,
        targets: Any,
        temperature: float,
        chunk_size: int,
        final_logit_softcapping: float | None = None,
        logit_scale: float = 1.0,
        outputs: tuple[str, ...] = ("log_probs",),
    ) -> tuple[Any, Any, Any, Any, Any]:
        import torch

        del chunk_size  # the vocabulary is projected whole; tokens are chunked instead
        n = hidden.shape[0]
        if n == 0:
            empty = hidden.new_zeros((0,), dtype=torch.float32) + (hidden.sum() * 0).float()
            return (
                empty,
                *(
                    empty if name in outputs else None
                    for name in ("entropy", "log_sum_sq_probs", "mean_logits")
                ),
                torch.zeros((0,), dtype=torch.bool) if "is_top1" in outputs else None,
            )  # type: ignore[return-value]
        parts = [
            _chunk_stats(
                hidden[start : start + TOKEN_CHUNK],
                weight,
                bias,
                targets[start : start + TOKEN_CHUNK],
                temperature,
                final_logit_softcapping,
                logit_scale,
                outputs,
            )
            for start in range(0, n, TOKEN_CHUNK)
        ]
        merged = tuple(
            None if parts[0][i] is None else torch.cat([p[i] for p in parts]) for i in range(5)
        )
        return merged  # type: ignore[return-value]


def install_cpu_lm_head(*, force: bool = False) -> bool:
    """Use :class:`TorchChunkedLogProb` for TRL's fused LM head when there is no GPU.

    Returns whether it was installed. Does nothing on a CUDA machine (unless ``force``),
    and nothing when this TRL has no fused LM head to replace.
    """
    import torch

    if torch.cuda.is_available() and not force:
        return False
    try:
        import trl.trainer.utils as trl_utils
    except ImportError:
        return False
    if not hasattr(trl_utils, "_ChunkedLogProbFunction"):
        return False
    setattr(trl_utils, "_ChunkedLogProbFunction", TorchChunkedLogProb)  # noqa: B010
    return True
