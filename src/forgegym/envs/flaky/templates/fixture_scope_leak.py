"""Scenario templates of the ``fixture_scope_leak`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
)

__all__ = ["fixture_module_scope"]


def fixture_module_scope(v: Variant) -> Draft:
    qty = v.num(2, 9)
    src = fill(
        """
        def restock(stock, item, n):
            stock[item] = stock.get(item, 0) + n
            return stock[item]


        def available(stock, item):
            return stock.get(item, 0)
        """,
        v,
    ) + distract_src(v)
    test_old = fill(
        """
        import pytest

        from $pkg import $mod


        @pytest.fixture(scope="module")
        def stock():
            return {"$key": $qty}


        def test_available(stock):
            assert $mod.available(stock, "$key") == $qty


        def test_restock(stock):
            assert $mod.restock(stock, "$key", 5) == $qty5
        """,
        v,
        qty=qty,
        qty5=qty + 5,
    )
    test_new = test_old.replace('@pytest.fixture(scope="module")', "@pytest.fixture")
    dt = distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=test_old + dt,
        test_fixed=test_new + dt,
        target="test_available",
        fault_file="test",
        fault_func="stock",
        mutant=("return stock.get(item, 0)\n", "return stock.get(item, 0) + 1\n"),
        summary="a module-scoped fixture hands one mutable object to every test",
    )
