import os

from dango.dlt_runner import _run_dlt_source, run_dir


class TestPipelinePhases:
    def test_load_acquires_lock(self, tmp_path):
        project = tmp_path / "proj"
        project.mkdir()
        assert _run_dlt_source(str(project), "github") == "loaded github into proj"


def test_run_dir_defaults_to_cwd():
    assert run_dir() == os.getcwd()
