import os

import pytest

from dango.dlt_runner import _run_dlt_source, run_dir


class TestPipelinePhases:
    @pytest.fixture(autouse=True)
    def _restore_dlt_project_dir(self):
        saved = os.environ.get("DLT_PROJECT_DIR")
        try:
            yield
        finally:
            if saved is None:
                os.environ.pop("DLT_PROJECT_DIR", None)
            else:
                os.environ["DLT_PROJECT_DIR"] = saved

    def test_load_acquires_lock(self, tmp_path):
        project = tmp_path / "proj"
        project.mkdir()
        assert _run_dlt_source(str(project), "github") == "loaded github into proj"


def test_run_dir_defaults_to_cwd():
    assert run_dir() == os.getcwd()
