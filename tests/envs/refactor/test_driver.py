"""The child-side check runner, exercised in-process on a scratch module."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from forgegym.envs.refactor import driver

MODULE = """
import warnings

_state = []


def add(x):
    _state.append(x)
    return len(_state)


def old(x):
    warnings.warn("old is deprecated", DeprecationWarning, stacklevel=2)
    return (x, {x})


def spin():
    while True:
        pass
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "fg_driver_mod.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("fg_driver_mod", None)


def test_sequences_start_from_a_fresh_import(workdir: Path) -> None:
    step = {"t": "fg_driver_mod:add", "a": [1]}
    out = driver.run_checks([[step, step], [step]])
    assert out == [[{"v": 1}, {"v": 2}], [{"v": 1}]]


def test_values_are_plain_and_warnings_recorded(workdir: Path) -> None:
    out = driver.run_checks(
        [[{"t": "fg_driver_mod:old", "a": [3]}, {"t": "fg_driver_mod:nope", "a": []}]]
    )
    first, second = out[0]
    assert first == {"v": [3, {"<set>": [3]}], "w": ["DeprecationWarning"]}
    assert second == {"e": "AttributeError"}


def test_a_step_over_its_cpu_budget_is_an_outcome_not_a_hang(workdir: Path) -> None:
    spin = {"t": "fg_driver_mod:spin", "a": []}
    out = driver.run_checks([[spin, spin, spin, {"t": "fg_driver_mod:add", "a": [1]}]])
    assert out[0][:3] == [{"e": "StepTimeout"}] * 3
    assert out[0][3] == {"e": "Skipped"}


def test_warnings_of_importing_belong_to_no_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An invalid escape warns when the module compiles: before the first step, so no
    # call's outcome depends on which step happens to import the module first.
    (tmp_path / "fg_driver_esc.py").write_text(
        'PATTERN = "\\\\d\\."\n\n\ndef f(x):\n    return x\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        out = driver.run_checks(
            [[{"t": "fg_driver_esc:f", "a": [1]}], [{"t": "fg_driver_esc:g", "a": []}]]
        )
    finally:
        sys.modules.pop("fg_driver_esc", None)
    assert out == [[{"v": 1}], [{"e": "AttributeError"}]]
