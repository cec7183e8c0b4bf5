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


# ------------------------------------------------ creating, deleting and moving files
SPLIT_FILES = {
    "stats.py": "def mean(xs):\n    return sum(xs) / len(xs)\n",
    "test_stats.py": "x = 1\n",
}


@pytest.fixture
def splittable() -> Workspace:
    ws = Workspace(SPLIT_FILES, ["stats.py"], creatable=["stats/*.py", "*.py"])
    yield ws
    ws.close()


def test_create_delete_and_move_files(splittable: Workspace) -> None:
    report = splittable.apply_edits(
        [
            EditSpec(path="stats/__init__.py", content="from stats.core import mean\n"),
            EditSpec(path="stats.py", move_to="stats/core.py"),
        ]
    )
    assert report.ok, report.errors
    assert splittable.created_files() == ["stats/__init__.py", "stats/core.py"]
    assert splittable.deleted_files() == ["stats.py"]
    assert not (splittable.root / "stats.py").exists()
    assert (splittable.root / "stats/core.py").read_text() == SPLIT_FILES["stats.py"]
    assert set(splittable.agent_files()) == {"stats/__init__.py", "stats/core.py"}
    assert "/dev/null" in splittable.diff()
    copy = splittable.grading_copy()
    assert not (copy / "stats.py").exists() and (copy / "stats/core.py").is_file()
    assert (copy / "test_stats.py").is_file()
    report = splittable.apply_edits([EditSpec(path="stats/__init__.py", delete=True)])
    assert report.ok and "stats/__init__.py" not in splittable.current
    splittable.reset()
    assert not (splittable.root / "stats").exists()
    assert splittable.current == SPLIT_FILES


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (EditSpec(path="conftest.py", content="x = 1\n"), "not editable"),
        (EditSpec(path="stats/sitecustomize.py", content="x = 1\n"), "not editable"),
        (EditSpec(path="test_stats.py", delete=True), "not editable"),
        (EditSpec(path="stats.py", move_to="test_stats.py"), "not editable"),
        (EditSpec(path="stats/missing.py", delete=True), "does not exist"),
        (EditSpec(path="stats/new.py", search="a", replace="b"), "does not exist"),
        (EditSpec(path="deep/er/x.py", content=""), "not editable"),
    ],
)
def test_refused_file_operations_change_nothing(
    splittable: Workspace, edit: EditSpec, message: str
) -> None:
    report = splittable.apply_edits([EditSpec(path="stats/ok.py", content="y = 2\n"), edit])
    assert not report.ok and message in report.errors[0]
    assert splittable.current == SPLIT_FILES
    assert not (splittable.root / "stats").exists()


def test_fixed_file_sets_refuse_deletes_and_new_files(workspace: Workspace) -> None:
    report = workspace.apply_edits([EditSpec(path="pkg/mod.py", delete=True)])
    assert not report.ok and "does not allow" in report.errors[0]
    report = workspace.apply_edits([EditSpec(path="pkg/new.py", content="x = 1\n")])
    assert not report.ok and "not editable" in report.errors[0]
    # A grading copy of arbitrary contents ignores files the agent may not write.
    copy = workspace.materialise({"pkg/new.py": "x = 1\n"}, deleted=["pkg/mod.py"])
    assert not (copy / "pkg/new.py").exists() and (copy / "pkg/mod.py").is_file()


@pytest.mark.parametrize(
    "raw",
    [
        {"path": "a.py"},
        {"path": "a.py", "delete": True, "content": "x"},
        {"path": "a.py", "search": "x"},
    ],
)
def test_edit_spec_needs_exactly_one_form(raw: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        EditSpec.model_validate(raw)


def test_an_in_memory_workspace_applies_the_same_edits_without_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORGEGYM_SCRATCH", str(tmp_path))
    edits = [
        EditSpec(path="stats/__init__.py", content="from stats.core import mean\n"),
        EditSpec(path="stats.py", move_to="stats/core.py"),
    ]
    memory = Workspace(SPLIT_FILES, ["stats.py"], creatable=["stats/*.py"], on_disk=False)
    disk = Workspace(SPLIT_FILES, ["stats.py"], creatable=["stats/*.py"])
    try:
        assert memory.root is None and list(tmp_path.iterdir()) == [disk.root]
        for ws in (memory, disk):
            assert ws.apply_edits(edits).ok
            assert not ws.apply_edits([EditSpec(path="test_stats.py", content="")]).ok
        assert memory.current == disk.current
        assert memory.deleted_files() == disk.deleted_files() == ["stats.py"]
        copy = memory.grading_copy()  # grading copies still work
        assert (copy / "stats/core.py").read_text() == SPLIT_FILES["stats.py"]
    finally:
        memory.close()
        disk.close()
    assert list(tmp_path.iterdir()) == []


def test_data_files_are_in_every_copy_but_never_the_agents() -> None:
    data = {"pkg/locale/fr.mo": b"\xde\x12\x04\x95\x00", "pkg/table.py": b"T = 1\n"}
    with Workspace(FILES, ["pkg/mod.py"], creatable=["pkg/*.py"], data_files=data) as ws:
        assert (
            ws.root is not None
            and (ws.root / "pkg/locale/fr.mo").read_bytes() == data["pkg/locale/fr.mo"]
        )
        # Not shown, not editable, not replaceable by a created or moved file.
        for path in data:
            assert not ws.writable(path)
            report = ws.apply_edits([EditSpec(path=path, content="x = 2\n")])
            assert not report.ok
        moved = ws.apply_edits([EditSpec(path="pkg/mod.py", move_to="pkg/table.py")])
        assert not moved.ok
        assert set(data).isdisjoint(ws.agent_files()) and ws.diff() == ""
        copy = ws.materialise({"pkg/table.py": "T = 2\n"}, {"hidden.py": "H = 1\n"})
        assert (copy / "pkg/table.py").read_bytes() == b"T = 1\n"
        assert (copy / "pkg/locale/fr.mo").read_bytes() == data["pkg/locale/fr.mo"]
        ws.reset()
        assert (ws.root / "pkg/table.py").read_bytes() == b"T = 1\n"
    with pytest.raises(ValueError, match="also text files"):
        Workspace(FILES, (), data_files={"pkg/mod.py": b""})


def test_the_pristine_manifest_vouches_for_data_files_by_their_bytes() -> None:
    import hashlib

    from forgegym.sandbox.jobs import pristine_manifest

    manifest = pristine_manifest({"a.py": "A = 1\n"}, {"b.mo": b"\xff\x00", "a.py": b"old"})
    assert manifest == {
        "a.py": hashlib.sha256(b"A = 1\n").hexdigest(),  # the text file of a path wins
        "b.mo": hashlib.sha256(b"\xff\x00").hexdigest(),
    }
