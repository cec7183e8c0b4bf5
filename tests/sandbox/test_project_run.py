"""A user's repository in the sandbox (``PytestJob.project``): its pristine pytest
configuration replaces the trusted ini, its conftest files load, its import roots are on
``sys.path``, and its dependency directories can be imported but never written."""

from __future__ import annotations

from pathlib import Path

from forgegym.sandbox.jobs import ProjectRun, PytestJob, RunStatus
from forgegym.sandbox.runners import get_default_runner

CONFIG = """\
[tool.pytest.ini_options]
python_files = ["check_*.py"]
markers = ["slow: slow tests"]
"""

CHECK = """\
import os
import depmod
from mylib import VALUE


def test_fixture_import_root_and_dependency(answer):
    assert answer == 42 and VALUE == 7 and depmod.NAME == "dep"


def test_the_dependency_directory_is_read_only():
    target = os.path.join(os.path.dirname(depmod.__file__), "planted.py")
    try:
        with open(target, "w") as f:
            f.write("x = 1\\n")
    except OSError:
        return
    raise AssertionError("wrote into the dependency directory")


def test_strict_markers_from_the_project(request):
    assert "slow: slow tests" in request.config.getini("markers")
"""


def test_project_configuration_conftest_roots_and_read_only_dependencies(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "mylib").mkdir(parents=True)
    (repo / "src" / "mylib" / "__init__.py").write_text("VALUE = 7\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef answer():\n    return 42\n"
    )
    (repo / "tests" / "check_things.py").write_text(CHECK)
    (repo / "tests" / "test_not_collected.py").write_text("def test_x():\n    assert False\n")
    (repo / "pyproject.toml").write_text(CONFIG)
    site = tmp_path / "site"
    site.mkdir()
    (site / "depmod.py").write_text('NAME = "dep"\n')
    project = ProjectRun(
        config_name="pyproject.toml",
        config_text=CONFIG,
        addopts=["--strict-markers"],
        import_paths=["src"],
        site_dirs=[str(site)],
    )
    result = get_default_runner().run(
        PytestJob(
            workdir=str(repo),
            targets=["tests"],
            project=project,
            conftest=True,
            timeout_s=60,
        )
    )
    assert result.status is RunStatus.COMPLETED, result
    assert sorted(result.verdicts) == [
        "tests/check_things.py::test_fixture_import_root_and_dependency",
        "tests/check_things.py::test_strict_markers_from_the_project",
        "tests/check_things.py::test_the_dependency_directory_is_read_only",
    ]
    assert result.all_passed, result.records
    assert not (site / "planted.py").exists()


def test_project_run_rejects_paths_outside_the_job() -> None:
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="import_paths"):
        ProjectRun(import_paths=["../outside"])
    with pytest.raises(ValidationError, match="site_dirs"):
        ProjectRun(site_dirs=["relative/site"])
    with pytest.raises(ValidationError, match="config_name"):
        ProjectRun(config_name="conftest.py")


DOCTESTED = '''\
def double(n):
    """Twice ``n``.

    >>> double(2)
    4
    """
    return 2 * n


def half(n):
    """Half of ``n``.

    >>> half(4)
    2
    """
    return n / 2
'''


def test_a_projects_doctest_modules_are_collected_without_reading_as_tampering(
    tmp_path: Path,
) -> None:
    # pytest's doctest plugin binds its runner and checker classes on first use: in
    # the sandbox that read as tampering with trusted state, so a project with
    # --doctest-modules in its addopts could not run at all. (Running a doctest is
    # refused by the runtime policy: doctest's runner calls sys.settrace; repository mode
    # reports such tests and never runs them again.)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "twice.py").write_text(DOCTESTED)
    (repo / "test_twice.py").write_text(
        "from twice import double\n\n\ndef test_double():\n    assert double(3) == 6\n"
    )
    config = "[pytest]\n"
    project = ProjectRun(
        config_name="pytest.ini", config_text=config, addopts=["--doctest-modules"]
    )
    (repo / "pytest.ini").write_text(config)
    result = get_default_runner().run(
        PytestJob(
            workdir=str(repo),
            targets=["."],
            project=project,
            conftest=True,
            timeout_s=60,
            order=["test_twice.py::test_double"],
        )
    )
    assert result.status is RunStatus.COMPLETED, result
    assert result.collected_ids == [
        "test_twice.py::test_double",
        "twice.py::twice.double",
        "twice.py::twice.half",
    ]
    assert [(r.nodeid, r.outcome.value) for r in result.records] == [
        ("test_twice.py::test_double", "passed")
    ]


PROPERTY = """\
from hypothesis import given, settings, strategies as st


@settings(max_examples=20, deadline=None, database=None)
@given(st.integers())
def test_a_failing_property(value):
    assert value < 5


def test_after_it():
    assert True
"""


def test_a_failing_hypothesis_property_fails_and_the_run_goes_on(tmp_path: Path) -> None:
    # Hypothesis traces a failing test's lines to explain the failure (``sys.settrace``,
    # refused to everything but the harness's watch): the test must fail, not end the
    # worker and every test after it.
    import pytest

    from forgegym.sandbox.jobs import pristine_manifest
    from forgegym.tasklib.depenv import ensure_environment

    try:
        site = ensure_environment(["hypothesis"])
    except ValueError as exc:  # no index and no cached environment
        pytest.skip(f"hypothesis cannot be installed here: {exc}")
    assert site is not None
    (tmp_path / "test_property.py").write_text(PROPERTY)
    result = get_default_runner().run(
        PytestJob(
            workdir=str(tmp_path),
            targets=["test_property.py"],
            timeout_s=120,
            project=ProjectRun(site_dirs=[str(site)]),
            conftest=True,
            pristine=pristine_manifest({"test_property.py": PROPERTY}),
        )
    )
    assert result.status is RunStatus.COMPLETED, (result.detail, result.stderr_tail[-800:])
    assert result.verdicts == {
        "test_property.py::test_a_failing_property": False,
        "test_property.py::test_after_it": True,
    }
