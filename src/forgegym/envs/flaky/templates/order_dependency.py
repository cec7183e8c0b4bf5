"""Scenario templates of the ``test_order_dependency`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
)

__all__ = ["order_polluter", "order_brittle"]


def order_polluter(v: Variant) -> Draft:
    cents = v.num(101, 9999)
    cur, other = v.rng.sample(("EUR", "USD", "GBP", "JPY", "CHF"), 2)
    sep = v.rng.choice(("", "_", "/"))
    src = fill(
        """
        _SETTINGS = {"currency": "$cur", "sep": " "}


        def configure(**settings):
            _SETTINGS.update(settings)


        def current_currency():
            return _SETTINGS["currency"]


        def current_sep():
            return _SETTINGS["sep"]


        def format_price(cents):
            return f"{cents / 100:.2f}{_SETTINGS['sep']}{_SETTINGS['currency']}"
        """,
        v,
        cur=cur,
    ) + distract_src(v)
    currency_old = fill(
        """
        def test_configure_currency():
            $mod.configure(currency="$other")
            assert $mod.format_price(100) == "1.00 $other"


        """,
        v,
        other=other,
    )
    currency_new = fill(
        """
        def test_configure_currency():
            previous = $mod.current_currency()
            $mod.configure(currency="$other")
            try:
                assert $mod.format_price(100) == "1.00 $other"
            finally:
                $mod.configure(currency=previous)


        """,
        v,
        other=other,
    )
    sep_old = fill(
        """
        def test_configure_separator():
            $mod.configure(sep="$sep")
            assert $mod.format_price(250).startswith("2.50$sep")
        """,
        v,
        sep=sep,
    )
    sep_new = fill(
        """
        def test_configure_separator():
            previous = $mod.current_sep()
            $mod.configure(sep="$sep")
            try:
                assert $mod.format_price(250).startswith("2.50$sep")
            finally:
                $mod.configure(sep=previous)
        """,
        v,
        sep=sep,
    )
    head = fill(
        """
        from $pkg import $mod


        def test_format_price():
            assert $mod.format_price($cents) == "$txt $cur"


        """,
        v,
        cents=cents,
        txt=f"{cents / 100:.2f}",
        cur=cur,
    )
    dt = distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=head + currency_old + sep_old + dt,
        test_fixed=head + currency_new + sep_new + dt,
        partial_test=head + currency_new + sep_old + dt,
        target="test_format_price",
        fault_file="test",
        fault_func="test_configure_currency",
        mutant=("cents / 100:.2f", "cents / 10:.2f"),
        summary="two other tests change module-level settings and never restore them",
    )


def order_brittle(v: Variant) -> Draft:
    rows = v.num(2, 5)
    src = fill(
        """
        _TABLES = {}


        def create_table(name):
            _TABLES[name] = []


        def insert(name, row):
            _TABLES[name].append(row)
            return len(_TABLES[name])


        def count(name):
            return len(_TABLES[name])
        """,
        v,
    ) + distract_src(v)
    setter = fill(
        """
        from $pkg import $mod


        def test_create_table():
            $mod.create_table("${noun}s")
            assert $mod.count("${noun}s") == 0


        """,
        v,
    )
    target_old = fill(
        """
        def test_insert_rows():
            for i in range($rows):
                $mod.insert("${noun}s", {"id": i})
            assert $mod.count("${noun}s") == $rows
        """,
        v,
        rows=rows,
    )
    target_new = fill(
        """
        def test_insert_rows():
            $mod.create_table("${noun}s")
            for i in range($rows):
                $mod.insert("${noun}s", {"id": i})
            assert $mod.count("${noun}s") == $rows
        """,
        v,
        rows=rows,
    )
    dt = distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=setter + target_old + dt,
        test_fixed=setter + target_new + dt,
        target="test_insert_rows",
        fault_file="test",
        fault_func="test_insert_rows",
        mutant=(
            "def count(name):\n    return len(_TABLES[name])",
            "def count(name):\n    return len(_TABLES[name]) + 1",
        ),
        summary="the test relies on a table another test creates (brittle: needs a state-setter)",
    )
