import os

from mdutils.fileutils import MarkDownFile


def test_read_template():
    assert MarkDownFile.read_file("tests/data/template.txt").startswith("# Title")


def test_create_file(tmp_path):
    md_file = MarkDownFile("Test_file", dirname=str(tmp_path))
    md_file.append_end("hello")
    assert MarkDownFile.read_file(os.path.join(tmp_path, "Test_file.md")) == "hello"
