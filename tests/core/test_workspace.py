from __future__ import annotations

from pathlib import Path

import pytest

from forgegym.core.actions import EditSpec
from forgegym.sandbox.workspace import Workspace, validate_relative_path

FILES = {"pkg/mod.py": "def f():\n    return 1\n", "tests/test_mod.py": "def test(): pass\n"}


@pytest.fixture
def workspace() -> Workspace:
    ws = Workspace(FILES, ["pkg/mod.py"])
    yield ws
    ws.close()


def test_search_replace_must_match_once(workspace: Workspace) -> None:
    report = workspace.apply_edits([EditSpec(path="pkg/mod.py", search="return", replace="return")])
    assert report.ok
    report = workspace.apply_edits([EditSpec(path="pkg/mod.py", search="nothing", replace="x")])
    assert not report.ok and "not found" in report.errors[0]
    workspace.apply_edits([EditSpec(path="pkg/mod.py", content="a\na\n")])
    report = workspace.apply_edits([EditSpec(path="pkg/mod.py", search="a", replace="b")])
    assert "found 2 times" in report.errors[0]


def test_edits_are_atomic(workspace: Workspace) -> None:
    report = workspace.apply_edits(
        [
            EditSpec(path="pkg/mod.py", search="return 1", replace="return 2"),
            EditSpec(path="tests/test_mod.py", content="def test(): assert True\n"),
        ]
    )
    assert not report.ok and "not editable" in report.errors[0]
    assert workspace.read("pkg/mod.py") == FILES["pkg/mod.py"]
    assert (workspace.root / "pkg/mod.py").read_text() == FILES["pkg/mod.py"]


def test_text_that_is_not_utf8_is_rejected_not_raised(workspace: Workspace) -> None:
    # json.loads('"\\ud800"') yields a lone surrogate, which cannot be written to disk.
    for edit in (
        EditSpec(path="pkg/mod.py", content="\ud800"),
        EditSpec(path="pkg/mod.py", search="return 1", replace="return '\udfff'"),
    ):
        report = workspace.apply_edits([edit])
        assert not report.ok and "UTF-8" in report.errors[0]
    assert (workspace.root / "pkg/mod.py").read_text() == FILES["pkg/mod.py"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../x.py", "pkg/../../x.py", "", "a\x00b"])
def test_paths_outside_the_workspace_are_refused(path: str) -> None:
    with pytest.raises(ValueError):
        validate_relative_path(path)


def test_grading_copy_restores_pristine_non_editable_files(workspace: Workspace) -> None:
    workspace.apply_edits([EditSpec(path="pkg/mod.py", search="return 1", replace="return 2")])
    # Code run by the agent could plant files in the workspace; a grading copy ignores them.
    (workspace.root / "conftest.py").write_text("raise SystemExit")
    (workspace.root / "tests/test_mod.py").write_text("tampered")
    copy = workspace.grading_copy({"hidden_check.py": "x = 1\n"})
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*.py")) == [
        "hidden_check.py",
        "pkg/mod.py",
        "tests/test_mod.py",
    ]
    assert (copy / "tests/test_mod.py").read_text() == FILES["tests/test_mod.py"]
    assert "return 2" in (copy / "pkg/mod.py").read_text()
    workspace.discard(copy)
    assert not copy.exists()


def test_diff_and_changed_files(workspace: Workspace) -> None:
    assert workspace.diff() == "" and workspace.changed_files() == []
    workspace.apply_edits([EditSpec(path="pkg/mod.py", search="return 1", replace="return 2")])
    assert workspace.changed_files() == ["pkg/mod.py"]
    assert "-    return 1\n+    return 2" in workspace.diff()


def test_symlinks_planted_in_the_tree_are_not_followed(tmp_path: Path) -> None:
    ws = Workspace(FILES, ["pkg/mod.py"])
    try:
        outside = tmp_path / "outside.py"
        outside.write_text("original")
        target = ws.root / "pkg/mod.py"
        target.unlink()
        target.symlink_to(outside)
        ws.apply_edits([EditSpec(path="pkg/mod.py", content="new")])
        assert outside.read_text() == "original"
        assert target.read_text() == "new"
    finally:
        ws.close()


def test_close_removes_everything() -> None:
    ws = Workspace(FILES, ["pkg/mod.py"])
    copy = ws.grading_copy()
    ws.close()
    assert not ws.root.exists() and not copy.exists()
