"""Scenario templates of the ``nondeterminism`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    KEYS,
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
    swap,
)

__all__ = ["nondet_tiebreak", "nondet_sample"]


def nondet_tiebreak(v: Variant) -> Draft:
    names = v.rng.sample(KEYS, v.num(2, 3))
    score = v.num(50, 99)
    src = fill(
        '''
        import random


        def leader(scores):
            """The name with the highest score (ties: alphabetical)."""
            best = max(scores.values())
            tied = [name for name, value in scores.items() if value == best]
            return random.choice(tied)
        ''',
        v,
    ) + distract_src(v)
    fixed = swap(src, "return random.choice(tied)", "return min(tied)")
    scores = {n: score for n in names}
    scores["zulu"] = score - 1
    test = fill(
        """
        from $pkg import $mod


        def test_leader_tiebreak():
            assert $mod.leader($scores) == "$first"
        """,
        v,
        scores=scores,
        first=min(names),
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_leader_tiebreak",
        fault_file="src",
        fault_func="leader",
        mutant=("return min(tied)", "return max(tied)"),
        summary="ties are broken with unseeded randomness",
    )


def nondet_sample(v: Variant) -> Draft:
    k = v.num(2, 3)
    src = fill(
        '''
        import random


        def batches(items, size):
            """Split ``items`` into batches of ``size`` (order kept)."""
            items = list(items)
            random.shuffle(items)
            return [items[i : i + size] for i in range(0, len(items), size)]
        ''',
        v,
    ) + distract_src(v)
    fixed = swap(src, "    random.shuffle(items)\n", "")
    test = fill(
        """
        from $pkg import $mod


        def test_batches_first():
            assert $mod.batches(range($n), $k)[0] == list(range($k))
        """,
        v,
        n=k,
        k=k,
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_batches_first",
        fault_file="src",
        fault_func="batches",
        mutant=("range(0, len(items), size)", "range(1, len(items), size)"),
        summary="batches() shuffles its input with the unseeded global RNG",
    )
