"""Scenario templates of the ``module_cache_pollution`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
    swap,
)

__all__ = ["cache_lru", "cache_mutable_result"]


def cache_lru(v: Variant) -> Draft:
    rate, other = v.rng.sample((5, 7, 10, 12, 15, 20), 2)
    fee, other_fee = v.rng.sample((1, 2, 3, 4), 2)
    amount = v.num(10, 90) * 10
    src = fill(
        """
        import functools

        _CONFIG = {"rate": $rate, "fee": $fee}


        def set_rate(rate):
            _CONFIG["rate"] = rate


        def set_fee(fee):
            _CONFIG["fee"] = fee


        def get_rate():
            return _CONFIG["rate"]


        def get_fee():
            return _CONFIG["fee"]


        @functools.lru_cache(maxsize=None)
        def tax_for(amount):
            return amount * _CONFIG["rate"] // 100


        @functools.lru_cache(maxsize=None)
        def fee_for(amount):
            return amount * _CONFIG["fee"] // 100
        """,
        v,
        rate=rate,
        fee=fee,
    ) + distract_src(v)
    partial = swap(
        src,
        '    _CONFIG["rate"] = rate\n',
        '    _CONFIG["rate"] = rate\n    tax_for.cache_clear()\n',
    )
    fixed = swap(
        partial,
        '    _CONFIG["fee"] = fee\n',
        '    _CONFIG["fee"] = fee\n    fee_for.cache_clear()\n',
    )
    test = fill(
        """
        from $pkg import $mod


        def test_tax_default_rate():
            assert $mod.tax_for($amount) == $tax
            assert $mod.fee_for($amount) == $fee_amt


        def test_tax_custom_rate():
            previous = $mod.get_rate()
            $mod.set_rate($other)
            try:
                totals = [$mod.tax_for(a) for a in ($amount, $amount2)]
                assert totals[1] == $tax2
            finally:
                $mod.set_rate(previous)


        def test_fee_custom():
            previous = $mod.get_fee()
            $mod.set_fee($other_fee)
            try:
                fees = [$mod.fee_for(a) for a in ($amount, $amount3)]
                assert fees[1] == $fee3
            finally:
                $mod.set_fee(previous)
        """,
        v,
        amount=amount,
        tax=amount * rate // 100,
        fee_amt=amount * fee // 100,
        other=other,
        amount2=amount + 10,
        tax2=(amount + 10) * other // 100,
        other_fee=other_fee,
        amount3=amount + 20,
        fee3=(amount + 20) * other_fee // 100,
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        partial_source=partial,
        target="test_tax_default_rate",
        fault_file="src",
        fault_func="set_rate",
        mutant=('amount * _CONFIG["rate"] // 100', 'amount * _CONFIG["rate"] // 10'),
        summary="lru_caches keep results computed under another configuration",
    )


def cache_mutable_result(v: Variant) -> Draft:
    src = fill(
        '''
        _CACHE = {}


        def get_profile(name):
            """Load (and memoise) the ${noun} profile of ``name``."""
            if name not in _CACHE:
                _CACHE[name] = {"name": name, "tags": ["new"]}
            return _CACHE[name]
        ''',
        v,
    ) + distract_src(v)
    fixed = swap(
        src,
        "    return _CACHE[name]\n",
        '    cached = _CACHE[name]\n    return {"name": cached["name"], "tags": list(cached["tags"])}\n',
    )
    test = fill(
        """
        from $pkg import $mod


        def test_profile_defaults():
            assert $mod.get_profile("$key") == {"name": "$key", "tags": ["new"]}


        def test_profile_tagging():
            profile = $mod.get_profile("$key")
            profile["tags"].append("vip")
            assert "vip" in profile["tags"]
        """,
        v,
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_profile_defaults",
        fault_file="src",
        fault_func="get_profile",
        mutant=('"tags": ["new"]', '"tags": ["old"]'),
        summary="the memo cache hands out its own mutable objects; callers pollute it",
    )
