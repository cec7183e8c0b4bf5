"""The no-surface-shortcut check: can wording statistics alone tell corrupted answers
from clean ones?

A bag-of-words + length logistic regression (numpy; L2-regularised, fitted by Newton's
method on standardised features) is trained on one half of the bank's worker texts
(chain of thought + answer) and scored by AUROC on the other half. An AUROC near 0.5
means clean and corrupted answers do not differ in length, template or wording.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from forgegym.envs.oversight.stats import auroc

__all__ = ["features", "fit_logistic", "surface_auroc"]

_TOKEN = re.compile(r"[a-z0-9_]+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def features(
    texts: Sequence[str], vocabulary: dict[str, int] | None = None, max_vocabulary: int = 500
) -> tuple[np.ndarray, dict[str, int]]:
    """Count features over ``vocabulary`` (built from ``texts`` when ``None``) plus the
    log character and token lengths."""
    tokenised = [_tokens(t) for t in texts]
    if vocabulary is None:
        counts: Counter[str] = Counter(tok for toks in tokenised for tok in set(toks))
        vocabulary = {w: i for i, (w, _) in enumerate(counts.most_common(max_vocabulary))}
    x = np.zeros((len(texts), len(vocabulary) + 2))
    for row, (text, toks) in enumerate(zip(texts, tokenised, strict=True)):
        for tok in toks:
            col = vocabulary.get(tok)
            if col is not None:
                x[row, col] += 1.0
        x[row, -2] = np.log1p(len(text))
        x[row, -1] = np.log1p(len(toks))
    return x, vocabulary


def fit_logistic(
    x: np.ndarray, y: np.ndarray, l2: float = 1.0, iterations: int = 25
) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method; returns ``(w, b)``."""
    n, d = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    beta = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ beta, -30, 30)))
        gradient = design.T @ (p - y) + penalty * beta
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-6:
            break
    return beta[:-1], float(beta[-1])


def surface_auroc(texts: Sequence[str], labels: Sequence[int], seed: int = 0) -> float:
    """Train on a random half, return the AUROC on the other half."""
    if len(texts) != len(labels) or len(texts) < 20:
        raise ValueError("texts: need at least 20 labelled texts")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(texts))
    half = len(texts) // 2
    train, test = order[:half], order[half:]
    x_train, vocabulary = features([texts[i] for i in train])
    x_test, _ = features([texts[i] for i in test], vocabulary)
    mean, std = x_train.mean(axis=0), x_train.std(axis=0) + 1e-9
    y = np.asarray(labels, dtype=float)
    w, b = fit_logistic((x_train - mean) / std, y[train])
    scores = ((x_test - mean) / std) @ w + b
    value = auroc([int(labels[i]) for i in test], scores.tolist())
    assert value is not None
    return value
