"""examples/vector_rollouts.ipynb runs top to bottom without errors (offline).

At the top level, not under a package's folder: it tests ``examples/``, which mirrors
no module of ``src/forgegym`` (the notebook drives envs, rollouts and plots together)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "vector_rollouts.ipynb"


def kernel_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``python3`` if installed, else a temporary kernelspec running this interpreter."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec("python3")
        if spec.argv:
            return "python3"
    except NoSuchKernel:
        pass
    # Why: CI may not have run `python -m ipykernel install`; point a spec at our venv.
    spec_dir = tmp_path / "jupyter" / "kernels" / "forgegym-test"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "forgegym test",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return "forgegym-test"


@pytest.mark.slow
def test_notebook_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name=kernel_name(tmp_path, monkeypatch),
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    images = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]
    assert len(images) == 3  # scores, episodes, curriculum
