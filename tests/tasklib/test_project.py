"""A repository's configuration, layout and package, read as pytest and a user would."""

from __future__ import annotations

import pytest

from forgegym.tasklib.project import (
    ProjectLayout,
    imports_of_tests,
    is_package_source,
    project_layout,
    read_project,
    reduce_addopts,
)


def test_addopts_keep_core_options_and_drop_plugins_and_stop_early_ones() -> None:
    kept, dropped = reduce_addopts(
        ["--strict-markers", "--cov=pkg", "--cov-report", "term", "-p", "xdist", "-p", "no:doctest"]
        + ["-x", "--import-mode=importlib", "-W", "error", "-n", "auto", "-ra"]
    )
    assert kept == ["--strict-markers", "-p", "no:doctest", "--import-mode=importlib"] + [
        "-W",
        "error",
        "-ra",
    ]
    assert dropped == ["--cov=pkg", "--cov-report term", "-p xdist", "-x", "-n", "auto"]


def test_the_config_file_pytest_would_pick_wins() -> None:
    files = {
        "tox.ini": "[pytest]\naddopts = --strict-markers\n",
        "setup.cfg": "[tool:pytest]\naddopts = -x\n",
        "pyproject.toml": "[project]\nname = 'x'\n",
        "src/pkg/__init__.py": "",
        "src/pkg/mod.py": "",
    }
    layout = project_layout(files)
    # pyproject.toml without a pytest table does not count while another file has one.
    assert layout.config_name == "tox.ini"
    assert layout.addopts == ("--strict-markers",)
    assert layout.import_paths == ("src",)
    toml = project_layout(
        {
            "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['lib']\n"
            "python_files = ['check_*.py']\naddopts = ['--cov', '-q']\n",
            "lib/m.py": "",
        }
    )
    assert toml.config_name == "pyproject.toml" and toml.import_paths == ("lib",)
    assert toml.addopts == ("-q",) and toml.dropped_addopts == ("--cov",)
    assert toml.is_test_file("tests/check_x.py") and not toml.is_test_file("tests/test_x.py")
    with pytest.raises(ValueError, match="pyproject.toml does not parse"):
        project_layout({"pyproject.toml": "[tool.pytest\n"})


def test_the_package_is_editable_docs_examples_and_build_scripts_are_not() -> None:
    assert is_package_source("pkg/mod.py")
    assert is_package_source("single.py")
    for path in ("docs/conf.py", "examples/demo.py", "setup.py", "noxfile.py", "tests/x.py"):
        assert not is_package_source(path), path
    assert not is_package_source("pkg/test_mod.py")
    # A src layout: only what lies under the import root.
    assert is_package_source("src/pkg/mod.py", ["src"])
    assert is_package_source("src/ns_pkg/sub/mod.py", ["src"])  # a namespace package
    assert not is_package_source("vendor/dep/__init__.py", ["src"])
    assert not is_package_source("tools/release.py", ["src"])


def test_the_root_in_pythonpath_beside_another_root_keeps_the_package_editable() -> None:
    # emoji 2.16.0: pythonpath = [".", "utils"]. Dropping "." left utils/ the only import
    # root, so the package itself (emoji/core.py) was not source: nothing fixable.
    files = {
        "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['.', 'utils']\n",
        "emoji/__init__.py": "",
        "emoji/core.py": "",
        "utils/testutils.py": "",
        "tools/release.py": "",
    }
    layout = project_layout(files)
    assert layout.import_paths == ("utils",) and layout.root_on_path
    assert layout.source_roots == ("utils", ".")
    sources = [p for p in sorted(files) if is_package_source(p, layout.source_roots)]
    assert sources == ["emoji/__init__.py", "emoji/core.py", "utils/testutils.py"]
    assert ProjectLayout.from_json(layout.to_json()) == layout  # the flag survives a round trip
    only_lib = project_layout({"setup.cfg": "[tool:pytest]\npythonpath = lib\n", "lib/m.py": ""})
    assert not only_lib.root_on_path and only_lib.source_roots == ("lib",)
    # The root alone is no import root to add: every file stays as without pythonpath.
    alone = project_layout({"setup.cfg": "[tool:pytest]\npythonpath = .\n", "m.py": ""})
    assert alone.source_roots == ()


def test_read_project_reads_text_data_and_copies_binary_files_by_content(tmp_path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "data.json").write_text("{}")
    (tmp_path / "pkg" / "logo.png").write_bytes(b"\x89PNG\x00")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.py").write_text("")
    files, skipped, data = read_project(tmp_path, max_file_bytes=1000, max_files=10)
    assert sorted(files) == ["pkg/__init__.py", "pkg/data.json"]
    assert data == {"pkg/logo.png": b"\x89PNG\x00"} and skipped == []
    # Over the data channel's budget: left out and reported.
    copy = read_project(tmp_path, max_file_bytes=1000, max_files=10, max_blob_bytes=3)
    assert copy.data_files == {} and copy.skipped == ["pkg/logo.png"]
    (tmp_path / "pkg" / "core.py").write_text("")
    with pytest.raises(ValueError, match="more than max_files=1"):
        read_project(tmp_path, max_file_bytes=10_000, max_files=1)


def test_a_data_module_over_max_file_bytes_is_copied_read_only_not_refused(tmp_path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    table = "TABLE = {\n" + "".join(f"    {i}: {i * i},\n" for i in range(300)) + "}\n"
    (tmp_path / "pkg" / "table.py").write_text(table)
    copy = read_project(tmp_path, max_file_bytes=1000, max_files=10)
    assert "pkg/table.py" not in copy.files  # never shown to (or editable by) the agent
    assert copy.data_files == {"pkg/table.py": table.encode()}
    # Over the data channel's budget too: the repository is refused, naming the file.
    with pytest.raises(ValueError, match=r"pkg/table.py \(\d+ bytes\) is over max_file_bytes"):
        read_project(tmp_path, max_file_bytes=1000, max_files=10, max_blob_bytes=100)


def test_tests_map_to_the_modules_they_import_transitively() -> None:
    files = {
        "pkg/__init__.py": "from pkg.core import f\n",
        "pkg/core.py": "from . import util\n",
        "pkg/util.py": "",
        "pkg/other.py": "",
        "tests/conftest.py": "import pkg.other\n",
        "tests/test_a.py": "from pkg import core\n",
    }
    mapping = imports_of_tests(files, [], ["tests/test_a.py"])
    assert mapping["tests/test_a.py"] == [
        "pkg/__init__.py",
        "pkg/core.py",
        "pkg/other.py",
        "pkg/util.py",
    ]


def test_a_host_run_that_timed_out_compares_only_what_it_reached() -> None:
    from forgegym.sandbox.jobs import PytestResult, RunStatus, TestOutcome, TestRecord
    from forgegym.tasklib.agreement import compare

    sandbox = PytestResult(
        status=RunStatus.COMPLETED,
        records=[
            TestRecord(nodeid="t.py::a", outcome=TestOutcome.PASSED),
            TestRecord(
                nodeid="t.py::b",
                outcome=TestOutcome.FAILED,
                error_type="ModuleNotFoundError",
                message="No module named 'yaml'",
            ),
            TestRecord(nodeid="t.py::c", outcome=TestOutcome.PASSED),
        ],
        collected_ids=["t.py::a", "t.py::b", "t.py::c"],
    )
    host = {"t.py::a": ("passed", ""), "t.py::b": ("passed", "")}
    (diff,) = compare(sandbox, host, host_complete=False)
    assert diff.nodeid == "t.py::b" and diff.cause.startswith("missing dependency (yaml")
    full = compare(sandbox, host)
    assert [d.nodeid for d in full] == ["t.py::b", "t.py::c"]


def test_a_thread_the_sandbox_cannot_start_is_reported_as_its_limit() -> None:
    # more-itertools' concurrency tests start many threads: in the sandbox they count
    # against its process limit (the cause was reported as "other").
    from forgegym.sandbox.jobs import PytestResult, RunStatus, TestOutcome, TestRecord
    from forgegym.tasklib.agreement import compare

    sandbox = PytestResult(
        status=RunStatus.COMPLETED,
        records=[
            TestRecord(
                nodeid="t.py::threads",
                outcome=TestOutcome.FAILED,
                error_type="RuntimeError",
                message="can't start new thread",
            )
        ],
        collected_ids=["t.py::threads"],
    )
    (diff,) = compare(sandbox, {"t.py::threads": ("passed", "")})
    assert diff.cause.startswith("sandbox limit (threads")


def test_the_copy_keeps_metadata_and_small_text_data_by_content(tmp_path) -> None:
    # importlib.metadata reads METADATA; a grammar or a spec file has no familiar suffix.
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "pkg" / "calc.lark").write_text("start: NUMBER\n")
    (tmp_path / "src" / "pkg" / "conf.spec").write_text("key = value\n")
    (tmp_path / "src" / "pkg" / "blob.bin").write_bytes(b"\x00\x01\x02")
    info = tmp_path / "src" / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (tmp_path / "LICENSE").write_text("MIT\n")
    files, skipped, data = read_project(tmp_path, max_file_bytes=10_000, max_files=10)
    assert {"src/pkg/calc.lark", "src/pkg/conf.spec", "src/pkg-1.0.dist-info/METADATA"} <= set(
        files
    )
    assert "LICENSE" not in files and skipped == [] and set(data) == {"src/pkg/blob.bin"}


def test_test_files_and_test_support_are_one_definition_for_both_families() -> None:
    from forgegym.tasklib.project import is_test_file, is_test_support

    assert is_test_file("tests/test_x.py") and is_test_file("pkg/x_test.py")
    assert is_test_file("conftest.py") and not is_test_file("tests/test_data.json")
    assert not is_test_file("tests/helpers.py") and is_test_support("tests/helpers.py")
    assert is_test_support("testing/data/x.py") and not is_test_support("pkg/testing.py")


def test_run_options_and_the_layout_read_one_pytest_section() -> None:
    from forgegym.tasklib.project import pytest_section, run_options

    files = {
        "tox.ini": "[tox]\nenvlist = py\n",
        "setup.cfg": "[tool:pytest]\npython_files = check_*.py\npythonpath = lib\n",
        "lib/pkg/__init__.py": "",
    }
    assert pytest_section(files)[0] == "setup.cfg"
    assert project_layout(files).import_paths == ("lib",)
    assert run_options(files) == {
        "conftest": False,
        "paths": ["lib"],
        "ini": {"python_files": "check_*.py"},
    }


def test_dependency_environment_rejects_a_string_for_test_dependencies(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from forgegym.tasklib.project import dependency_environment

    with pytest.raises(ValueError, match="test_dependencies: expected a list"):
        dependency_environment({"x.py": ""}, tmp_path, "attrs")
