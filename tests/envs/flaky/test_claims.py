"""Diagnosis claims are checked against the code: hallucinated references cost."""

from __future__ import annotations

from forgegym.envs.flaky.actions import Diagnosis
from forgegym.envs.flaky.claims import check_diagnoses

FILES = {
    "app/cache.py": "_CACHE = {}\n\n\ndef lookup(key):\n    return _CACHE.setdefault(key, len(_CACHE))\n",
    "tests/test_cache.py": "from app.cache import lookup\n\n\nclass TestLookup:\n    def test_first(self):\n        assert lookup('a') == 0\n",
}


def _check(location: str, *claims: str):
    return check_diagnoses(
        [Diagnosis(category="shared_state", location=location, claims=list(claims))], FILES
    )


def test_existing_references_pass() -> None:
    result = _check(
        "app/cache.py::lookup",
        "`_CACHE` is a module-level dict that `lookup()` fills and nobody clears",
        "tests/test_cache.py:6 asserts on the first key; see cache.py::lookup",
        "TestLookup.test_first depends on the order the tests run in",
    )
    assert result.checked >= 4 and result.missing == []
    assert _check("tests/test_cache.py::TestLookup.test_first").missing == []


def test_nonexistent_files_lines_symbols_and_locations_are_hallucinations() -> None:
    assert _check("app/store.py::lookup").missing == ["file app/store.py"]
    assert _check("app/cache.py::reset_cache").missing == ["app/cache.py::reset_cache"]
    result = _check(
        "app/cache.py::lookup",
        "`invalidate_all()` is never called",
        "the bug is at app/cache.py:400",
        "`_CACHE` grows",
    )
    assert sorted(result.missing) == ["line app/cache.py:400", "symbol invalidate_all"]
    assert 0 < result.rate < 1


def test_prose_is_not_a_reference() -> None:
    result = _check("", "the cache leaks between tests because nothing resets it", "`a + b` wrong")
    assert result.checked == 0 and result.rate == 0.0


def test_module_level_location_exists_when_its_file_does() -> None:
    """``path::<module>`` is Python's own name for a file's top level (an import-time
    side effect's location): it exists when the file does."""
    assert _check("app/cache.py::<module>").missing == []
    assert _check("app/store.py::<module>").missing == ["file app/store.py"]
