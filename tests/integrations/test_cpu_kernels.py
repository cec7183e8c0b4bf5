"""The plain-PyTorch LM head equals TRL's Triton kernel (interpreted on the CPU)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
kernels = pytest.importorskip("trl.kernels")

from forgegym.integrations.cpu_kernels import TorchChunkedLogProb  # noqa: E402

OUTPUTS = ("log_probs", "entropy", "log_sum_sq_probs", "mean_logits", "is_top1")


@pytest.mark.parametrize("softcap", [None, 5.0])
def test_outputs_and_gradients_match_trl_kernel(softcap: float | None) -> None:
    torch.manual_seed(0)
    hidden, weight, bias = torch.randn(9, 8), torch.randn(70, 8), torch.randn(70)
    targets = torch.randint(0, 70, (9,))
    results = []
    for function in (kernels.ChunkedLogProbFunction, TorchChunkedLogProb):
        h, w, b = (t.clone().requires_grad_() for t in (hidden, weight, bias))
        out = function.apply(h, w, b, targets, 0.7, 32, softcap, 1.3, OUTPUTS)
        (out[0].sum() + 0.5 * out[1].sum()).backward()
        results.append((out, h.grad, w.grad, b.grad))
    (trl_out, *trl_grads), (ours, *our_grads) = results
    for name, a, b in zip(OUTPUTS[:4], trl_out[:4], ours[:4], strict=True):
        assert torch.allclose(a, b, atol=1e-4), name
    assert torch.equal(trl_out[4], ours[4])
    for a, b in zip(trl_grads, our_grads, strict=True):
        assert torch.allclose(a, b, atol=1e-4)


def test_unrequested_outputs_are_none() -> None:
    hidden, weight = torch.randn(3, 4), torch.randn(10, 4)
    out = TorchChunkedLogProb.apply(hidden, weight, None, torch.tensor([1, 2, 3]), 1.0, 8)
    assert out[0].shape == (3,) and all(x is None for x in out[1:])
