import os

from scilpy.io import load_help, write_header


def test_help():
    assert load_help('scripts/scil_print_header.py').startswith('"""usage')


def test_execution(tmp_path):
    os.chdir(tmp_path)
    write_header("header.txt", "dim: 3")
    assert os.path.exists("header.txt")
