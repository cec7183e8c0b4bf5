"""``forgegym tasks build --repo``: a project the factory cannot use is one line on
stderr and exit status 2, never a traceback or an empty bank."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgegym.cli import main

MODULE = "def double(x):\n    return 2 * x\n"


def _project(root: Path, tests: dict[str, str]) -> Path:
    (root / "mypkg").mkdir(parents=True)
    (root / "mypkg" / "__init__.py").write_text(MODULE)
    if tests:
        (root / "tests").mkdir()
        for name, text in tests.items():
            (root / "tests" / name).write_text(text)
    return root


@pytest.mark.parametrize(
    ("tests", "message"),
    [
        ({}, "no test"),
        (
            {
                "test_double.py": "from mypkg import double\n\ndef test_double():\n    assert double(2) == 5\n"
            },
            "test",
        ),
        ({"test_nothing.py": "def test_truth():\n    assert 1 + 1 == 2\n"}, "no task"),
    ],
    ids=["no-tests", "only-test-fails", "covers-nothing"],
)
def test_a_project_the_factory_cannot_use_is_one_line_and_exit_2(
    tmp_path: Path, tests: dict[str, str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path / "proj", tests)
    out = tmp_path / "bank"
    code = main(["tasks", "build", "--repo", str(root), "--name", "mypkg==0.1", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2, captured
    error = captured.err.strip()
    assert error.startswith("forgegym: ") and "\n" not in error and message in error
    assert "Traceback" not in captured.err + captured.out
    assert not list(out.glob("*.manifest*"))  # no empty bank written
