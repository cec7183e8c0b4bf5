"""Scenario templates of the ``shared_state`` root cause."""

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

__all__ = ["shared_mutable_default", "shared_class_attr"]


def shared_mutable_default(v: Variant) -> Draft:
    a, b = v.rng.sample(KEYS, 2)
    src = fill(
        '''
        def record(event, log=[]):
            """Append ``event`` to ``log`` and return the log."""
            log.append(event)
            return log
        ''',
        v,
    ) + distract_src(v)
    fixed = swap(
        src,
        "def record(event, log=[]):",
        "def record(event, log=None):",
    )
    fixed = swap(
        fixed,
        "    log.append(event)\n",
        "    log = [] if log is None else log\n    log.append(event)\n",
    )
    test = fill(
        """
        from $pkg import $mod


        def test_record_single():
            assert $mod.record("$a") == ["$a"]


        def test_record_into_log():
            log = ["$b"]
            assert $mod.record("$a", log) == ["$b", "$a"]
            assert $mod.record("$b") != []
        """,
        v,
        a=a,
        b=b,
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_record_single",
        fault_file="src",
        fault_func="record",
        mutant=("    log.append(event)\n", "    log.append(event.upper())\n"),
        summary="a mutable default argument shares one list across calls",
    )


def shared_class_attr(v: Variant) -> Draft:
    price = v.num(2, 30)
    off = v.num(1, 3)
    noun = v.noun.capitalize()
    src = fill(
        """
        class ${Noun}Cart:
            items = []
            discounts = []

            def add(self, name, price):
                self.items.append((name, price))

            def discount(self, amount):
                self.discounts.append(amount)

            def total(self):
                return sum(price for _, price in self.items) - sum(self.discounts)
        """,
        v,
        Noun=noun,
    ) + distract_src(v)
    attrs = "    items = []\n    discounts = []\n"
    fixed = swap(
        src,
        attrs,
        "    def __init__(self):\n        self.items = []\n        self.discounts = []\n",
    )
    partial = swap(
        src, attrs, "    discounts = []\n\n    def __init__(self):\n        self.items = []\n"
    )
    test = fill(
        """
        from $pkg import $mod


        def test_cart_total():
            cart = $mod.${Noun}Cart()
            cart.add("$key", $price)
            assert cart.total() == $price


        def test_cart_two_items():
            cart = $mod.${Noun}Cart()
            cart.add("a", 1)
            cart.add("b", 2)
            assert cart.total() >= 3


        def test_cart_discount():
            cart = $mod.${Noun}Cart()
            cart.add("c", 10)
            cart.discount($off)
            assert cart.total() < sum(p for _, p in cart.items)
        """,
        v,
        Noun=noun,
        price=price,
        off=off,
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        partial_source=partial,
        target="test_cart_total",
        fault_file="src",
        fault_func=f"{noun}Cart",
        mutant=(
            "sum(price for _, price in self.items)",
            "sum(price for _, price in self.items) + 1",
        ),
        summary="items and discounts are class attributes shared by every cart",
    )
