"""Scenario templates of the ``mock_residue`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
)

__all__ = ["mock_unstopped", "mock_assignment"]


def mock_unstopped(v: Variant) -> Draft:
    rate = v.num(2, 9)
    src = fill(
        """
        def exchange_rate():
            return $rate


        def convert(amount):
            return amount * exchange_rate()
        """,
        v,
        rate=rate,
    ) + distract_src(v)
    head = fill(
        """
        from unittest import mock

        from $pkg import $mod


        def test_convert():
            assert $mod.convert(10) == $ten


        """,
        v,
        ten=10 * rate,
    )
    polluter_old = fill(
        """
        def test_convert_with_mocked_rate():
            mock.patch("$pkg.$mod.exchange_rate", return_value=100).start()
            assert $mod.convert(2) == 200
        """,
        v,
    )
    polluter_new = fill(
        """
        def test_convert_with_mocked_rate():
            with mock.patch("$pkg.$mod.exchange_rate", return_value=100):
                assert $mod.convert(2) == 200
        """,
        v,
    )
    dt = distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=head + polluter_old + dt,
        test_fixed=head + polluter_new + dt,
        target="test_convert",
        fault_file="test",
        fault_func="test_convert_with_mocked_rate",
        mutant=("return amount * exchange_rate()", "return amount + exchange_rate()"),
        summary="a mock.patch is started and never stopped",
    )


def mock_assignment(v: Variant) -> Draft:
    word = v.rng.choice(("Hello", "Welcome", "Hi"))
    src = fill(
        """
        def _greeting():
            return "$word"


        def greet(name):
            return f"{_greeting()}, {name}!"
        """,
        v,
        word=word,
    ) + distract_src(v)
    head = fill(
        """
        from $pkg import $mod


        def test_greet():
            assert $mod.greet("$key") == "$word, $key!"


        """,
        v,
        word=word,
    )
    polluter_old = fill(
        """
        def test_greet_custom():
            $mod._greeting = lambda: "Yo"
            assert $mod.greet("x") == "Yo, x!"
        """,
        v,
    )
    polluter_new = fill(
        """
        def test_greet_custom(monkeypatch):
            monkeypatch.setattr($mod, "_greeting", lambda: "Yo")
            assert $mod.greet("x") == "Yo, x!"
        """,
        v,
    )
    dt = distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=head + polluter_old + dt,
        test_fixed=head + polluter_new + dt,
        target="test_greet",
        fault_file="test",
        fault_func="test_greet_custom",
        mutant=('return f"{_greeting()}, {name}!"', 'return f"{_greeting()} {name}!"'),
        summary="a test replaces a module attribute by assignment and never restores it",
    )
