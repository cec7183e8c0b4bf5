from refac.imports import add_imports


def test_add_imports():
    source = "import json\n\nprint(json)\n"
    expected = "import json\nimport os\nimport re\nimport sys\n\nprint(json)\n"
    assert add_imports(source, {"os", "re", "sys"}) == expected


def test_nothing_missing():
    assert add_imports("import os\n", {"os"}) == "import os\n"
