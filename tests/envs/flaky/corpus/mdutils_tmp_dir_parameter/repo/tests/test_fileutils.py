import os

from mdutils.fileutils import MarkDownFile


def test_read_template():
    assert MarkDownFile.read_file("tests/data/template.txt").startswith("# Title")


def test_create_file(tmp_path):
    os.chdir(tmp_path)
    md_file = MarkDownFile("Test_file")
    md_file.append_end("hello")
    assert MarkDownFile.read_file("Test_file.md") == "hello"
