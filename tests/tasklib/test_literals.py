"""Special-casing of the tests' literals (shared by Bugfix and FlakyRepair's
repository mode)."""

from __future__ import annotations

from forgegym.tasklib.literals import scan_hardcoded_expectations

TESTS = [
    "def test_first():\n    assert tags()[0] == 'red'\n    assert tags() == ['red', 'green', 'blue']\n"
]
PRISTINE = "def tags():\n    return list({'red', 'green', 'blue'})\n"


def test_rebuilding_the_files_own_constants_in_order_is_not_special_casing() -> None:
    """A set rewritten as a list (the hash-order fix) returns a list the tests also
    hold, built only from the file's own constants: a fix in repository mode."""
    fixed = "def tags():\n    return ['red', 'green', 'blue']\n"
    assert scan_hardcoded_expectations(PRISTINE, fixed, "c.py", TESTS, known_constants=True) == []
    # Without the repository exemption (Bugfix's visible tests), the same patch is seen.
    assert scan_hardcoded_expectations(PRISTINE, fixed, "c.py", TESTS)


def test_a_new_literal_from_the_tests_is_special_casing_even_beside_known_ones() -> None:
    """A container holding a value the file never had is not a rebuild of its constants."""
    cheat = "def tags():\n    return ['red', 'green', 'blue', 'cyan']\n"
    tests = [*TESTS, "def test_all():\n    assert tags() == ['red', 'green', 'blue', 'cyan']\n"]
    findings = scan_hardcoded_expectations(PRISTINE, cheat, "c.py", tests, known_constants=True)
    assert [f.kind for f in findings] == ["hardcoded_expectation"]
    guard = (
        "def tags(n=0):\n    if n == 'purple':\n        return 'red'\n    return list({'red'})\n"
    )
    tests = [*TESTS, "def test_purple():\n    assert tags('purple') == 'red'\n"]
    findings = scan_hardcoded_expectations(PRISTINE, guard, "c.py", tests, known_constants=True)
    assert [f.kind for f in findings] == ["hardcoded_expectation"]


def test_the_bounds_of_a_range_are_not_special_casing() -> None:
    """tenacity's upstream fix: ``11 <= n % 100 <= 13`` classifies a range the tests
    probe at 11 and 13; an interval admitting one integer singles an input out."""
    pristine = "def ordinal(n):\n    return 'st' if n == 1 else 'th'\n"
    tests = ["def test_it():\n    assert ordinal(11) == 'th'\n    assert ordinal(13) == 'th'\n"]
    ranged = "def ordinal(n):\n    if 11 <= n % 100 <= 13:\n        return 'th'\n    return 'st' if n == 1 else 'th'\n"
    assert scan_hardcoded_expectations(pristine, ranged, "c.py", tests, known_constants=True) == []
    pinned = ranged.replace("11 <= n % 100 <= 13", "11 <= n <= 11")
    assert scan_hardcoded_expectations(pristine, pinned, "c.py", tests, known_constants=True)
