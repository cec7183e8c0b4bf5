"""Scenario templates of the ``resource_leak`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
    swap,
)

__all__ = ["leak_pool"]


def leak_pool(v: Variant) -> Draft:
    size = v.num(2, 4)
    calls = size - 1 if size > 2 else 1
    mult = v.num(2, 7)
    src = fill(
        """
        from $pkg import fakes

        POOL = fakes.ResourcePool($size)


        def total_for(ids):
            handle = POOL.acquire()
            total = sum(i * $mult for i in ids)
            return total
        """,
        v,
        size=size,
        mult=mult,
    ) + distract_src(v)
    fixed = swap(
        src,
        f"""    handle = POOL.acquire()
    total = sum(i * {mult} for i in ids)
    return total
""",
        f"""    handle = POOL.acquire()
    try:
        return sum(i * {mult} for i in ids)
    finally:
        POOL.release(handle)
""",
    )
    test = fill(
        """
        from $pkg import $mod


        def test_totals():
            for n in range(1, $calls + 1):
                assert $mod.total_for(range(n)) == sum(range(n)) * $mult


        def test_single_total():
            assert $mod.total_for([1, 2]) == $three
        """,
        v,
        calls=calls,
        mult=mult,
        three=3 * mult,
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_totals",
        fault_file="src",
        fault_func="total_for",
        mutant=(f"i * {mult} for i in ids", f"i * {mult} + 1 for i in ids"),
        summary="total_for() acquires a pooled handle and never releases it",
    )
