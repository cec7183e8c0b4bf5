"""Integrity rules on what real refactorings do (see also the kinds' own tests)."""

from __future__ import annotations

from forgegym.envs.refactor.integrity import integrity_findings

PACKAGE = {
    "pkg/__init__.py": "from ._impl import *  # noqa\n",
    "pkg/_impl.py": "def old(x):\n    return x + 1\n",
}


def test_a_star_import_the_original_had_is_not_a_forwarding_trick() -> None:
    # A package that re-exports with a star import keeps it while a rename adds a
    # deprecated alias beside it (jellyfish's jaro_winkler shim).
    after = {
        "pkg/__init__.py": PACKAGE["pkg/__init__.py"]
        + "import warnings\n\n\ndef old(x):\n"
        + "    warnings.warn('old', DeprecationWarning)\n    return new(x)\n",
        "pkg/_impl.py": "def new(x):\n    return x + 1\n",
    }
    rules = {"allow_star": False, "aliases": {"old": "new"}, "moved": {"new": "pkg/_impl.py"}}
    assert integrity_findings(after, PACKAGE, PACKAGE, rules) == []


def test_a_star_import_the_refactoring_adds_is_still_one() -> None:
    starting = {"m.py": "def f(x):\n    return x\n"}
    after = {"m.py": "from helpers import *  # noqa\n", "helpers.py": "def f(x):\n    return x\n"}
    found = integrity_findings(after, starting, starting, {"allow_star": False})
    assert any("star import" in f for f in found)
