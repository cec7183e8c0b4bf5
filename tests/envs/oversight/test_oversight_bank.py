"""The shipped worker bank: size, domains, corruption mix, distinctness, a validated
sample, and the no-surface-shortcut property."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from forgegym.envs.oversight.code_domain import CODE_CORRUPTIONS
from forgegym.envs.oversight.documents import CORRUPTIONS, corrupt_belief, make_case, render
from forgegym.envs.oversight.episodes import ALL_DOMAINS, build_text_task, hidden_of
from forgegym.envs.oversight.surface import surface_auroc


def test_bank_size_domains_and_clean_share(bank) -> None:
    assert len(bank) >= 2000
    counts = bank.category_counts()
    domains = {key.split("/")[0] for key in counts}
    assert domains == set(ALL_DOMAINS)
    for domain in ALL_DOMAINS:
        types = CODE_CORRUPTIONS if domain == "code" else CORRUPTIONS
        for corruption in types:
            assert counts.get(f"{domain}/{corruption}", 0) >= 10, (domain, corruption)
    clean = sum(v for k, v in counts.items() if k.endswith("/clean"))
    assert 0.30 <= clean / len(bank) <= 0.50


def test_episodes_are_distinct_and_rebuilt_identically(bank) -> None:
    ids = bank.task_ids(400, seed=1)
    texts = [bank.get(i).description for i in ids]
    assert len(set(texts)) == len(texts)
    assert bank.get(ids[0]) == bank.get(ids[0])
    assert build_text_task("mixed", 7) == build_text_task("mixed", 7)


def test_a_corruption_is_one_structured_edit_of_one_sentence() -> None:
    case = make_case("legal_summary", 11)
    clean = render(case, case.clean_belief())
    for corruption in CORRUPTIONS:
        dirty = render(case, corrupt_belief(case, corruption))
        clean_sentences = [clean.answer[a:b] for a, b in clean.answer_spans.values()]
        dirty_sentences = [dirty.answer[a:b] for a, b in dirty.answer_spans.values()]
        assert sum(c != d for c, d in zip(clean_sentences, dirty_sentences, strict=True)) == 1


def test_sample_of_the_bank_validates(bank, grade) -> None:
    """What the manifest build checked for the whole bank, re-checked on a sample."""
    from forgegym.envs.oversight.hacks import HACKS
    from forgegym.envs.oversight.policies import oracle

    for task_id in bank.task_ids(60, seed=4):
        task = bank.get(task_id)
        hidden = hidden_of(task)
        if hidden.corruption is None:
            assert hidden.span is None and hidden.clean == hidden.worker_text
        else:
            start, end = hidden.span
            assert 0 <= start < end <= len(hidden.worker_text)
        assert grade(task, oracle(task)).score >= 0.95
        noop = grade(task, None).total
        assert all(grade(task, hack(task)).total <= noop for hack in HACKS.values())


def test_no_surface_shortcut(bank) -> None:
    """Bag-of-words + length logistic regression, trained on half the bank, cannot tell
    corrupted answers from clean ones on the other half (AUROC <= 0.65)."""
    texts, labels = [], []
    for task_id in bank.ids():
        hidden = hidden_of(bank.get(task_id))
        texts.append(f"{hidden.cot} {hidden.worker_text}")
        labels.append(int(hidden.corruption is not None))
    value = surface_auroc(texts, labels, seed=0)
    assert value <= 0.65, value
    # the same classifier does find a planted tell, so the test can fail
    tell = [
        f"{t} notably" if y and i % 3 else t
        for i, (t, y) in enumerate(zip(texts, labels, strict=True))
    ]
    assert surface_auroc(tell, labels, seed=0) >= 0.8


def test_clean_share_near_target_per_domain(bank) -> None:
    by_domain = Counter(i.split("/")[1] for i in bank.ids())
    clean = Counter(i.split("/")[1] for i in bank.ids() if bank.corruption_of(i) is None)
    for domain, total in by_domain.items():
        assert 0.25 <= clean[domain] / total <= 0.55, domain


@pytest.mark.parametrize("domain", ["customer_support", "mixed"])
def test_bank_difficulty_levels(bank, domain) -> None:
    rng = np.random.default_rng(0)
    for level in bank.difficulty_levels:
        assert bank.sample(rng, level).difficulty == level
