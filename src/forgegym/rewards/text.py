"""Text overlap via the ``rouge-score`` package (no hand-written ROUGE).

``rouge-score`` (and the nltk it loads) is imported on first use, not with
:mod:`forgegym.rewards`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["rouge_l"]


@lru_cache(maxsize=2)
def _scorer(use_stemmer: bool) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)


def rouge_l(candidate: str, reference: str, *, use_stemmer: bool = False) -> float:
    """ROUGE-L F-measure of ``candidate`` against ``reference``, in [0, 1].

    Tokenisation is ``rouge-score``'s default (lower-cased alphanumeric tokens). If
    either side has no tokens (empty or only punctuation) the score is 1.0 when both
    are token-free and 0.0 otherwise.
    """
    if not isinstance(candidate, str) or not isinstance(reference, str):
        raise TypeError("rouge_l: candidate and reference must be str")
    scorer = _scorer(use_stemmer)
    tokenize = scorer._tokenizer.tokenize  # the package's own tokenizer
    cand_empty, ref_empty = not tokenize(candidate), not tokenize(reference)
    if cand_empty or ref_empty:
        return 1.0 if cand_empty and ref_empty else 0.0
    return float(scorer.score(reference, candidate)["rougeL"].fmeasure)
