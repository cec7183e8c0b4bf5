"""Warm test code (:mod:`forgegym.sandbox.warmcode`, :mod:`forgegym.sandbox.runners.warm`):
the parent's code objects are the ones pytest's rewriter makes, a zygote serves them
only for the exact bytes at the exact path, and a run's verdicts do not change."""

from __future__ import annotations

import marshal
from pathlib import Path

import _pytest.assertion.rewrite as rewrite
import pytest

from forgegym.sandbox import confinement, warmcode
from forgegym.sandbox.jobs import PytestJob
from forgegym.sandbox.runners import ForkServerRunner, warm

TESTS = {
    "tests/test_calc.py": (
        "from calc import add\n\n\n"
        "def test_add():\n    assert add(1, 2) == 3\n\n\n"
        "def test_add_wrong():\n    x = add(2, 2)\n    assert x == 5, 'two and two'\n"
    ),
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n",
}


def _table(data: bytes) -> dict:
    assert data.startswith(warmcode.HEADER)
    return marshal.loads(data[len(warmcode.HEADER) :])


def test_the_parent_compiles_what_pytest_rewrites(tmp_path: Path) -> None:
    table = _table(warm.compile_tests(TESTS, str(tmp_path)))
    assert len(table) == len(TESTS)
    for rel, text in TESTS.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        _hash, expected = rewrite._rewrite_test(path, None)  # type: ignore[arg-type]
        ((key, code),) = [(k, c) for k, c in table.items() if k[0] == str(path)]
        assert code == expected  # same bytecode, constants, names, positions


def test_a_file_that_does_not_parse_is_left_to_pytest(tmp_path: Path) -> None:
    table = _table(warm.compile_tests({"tests/test_bad.py": "def test(:\n"}, str(tmp_path)))
    assert table == {}


def test_install_serves_only_the_exact_bytes_and_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warmcode, "_CODE", {})
    monkeypatch.setattr(rewrite, "_rewrite_test", rewrite._rewrite_test)
    original = rewrite._rewrite_test
    code_file = tmp_path / "warm.bin"
    code_file.write_bytes(warm.compile_tests(TESTS, str(tmp_path)))
    (tmp_path / "junk.bin").write_bytes(b"not a code file")
    warmcode.install([str(tmp_path / "junk.bin"), str(tmp_path / "missing.bin"), str(code_file)])
    assert warmcode.table_size() == 2 and rewrite._rewrite_test is not original
    path = tmp_path / "tests" / "test_calc.py"
    path.parent.mkdir()
    path.write_text(TESTS["tests/test_calc.py"])
    _hash, served = rewrite._rewrite_test(path, None)  # type: ignore[arg-type]
    assert served is warmcode.lookup(str(path), path.read_bytes())
    # another byte: pytest's own rewrite, a fresh code object
    path.write_text(TESTS["tests/test_calc.py"] + "\n")
    _hash, fresh = rewrite._rewrite_test(path, None)  # type: ignore[arg-type]
    assert fresh is not served and warmcode.lookup(str(path), path.read_bytes()) is None
    # the same bytes elsewhere: not served either
    other = tmp_path / "elsewhere" / "test_calc.py"
    other.parent.mkdir()
    other.write_text(TESTS["tests/test_calc.py"])
    assert warmcode.lookup(str(other), other.read_bytes()) is None


def test_registering_the_same_files_again_starts_no_new_generation(tmp_path: Path) -> None:
    files = {"tests/test_gen.py": f"def test_gen():\n    assert {tmp_path.name!r}\n"}
    key = warm.register_tests(files, tmp_path)
    after = warm.generation()
    assert warm.register_tests(files, tmp_path) == key and warm.generation() == after
    assert (tmp_path / f"{key}.bin").read_bytes() == warm.registered()[key]


confined = pytest.mark.skipif(
    not confinement.confinement_status().namespaces, reason="bubblewrap cannot run here"
)

PROBE = """\
import sys


def test_probe():
    wc = sys.modules.get("forgegym.sandbox.warmcode")
    assert wc is not None and wc.table_size() > 0
    assert wc.lookup(__file__, open(__file__, "rb").read()) is not None
"""


@confined
@pytest.mark.slow
def test_a_confined_zygote_serves_registered_tests_and_verdicts_do_not_change(
    tmp_path: Path,
) -> None:
    files = {**TESTS, "tests/test_probe.py": PROBE, "calc.py": "def add(a, b):\n    return a + b\n"}
    warm.register_tests({p: t for p, t in files.items() if p.startswith("tests/")})
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    job = PytestJob(workdir=str(tmp_path), targets=["tests"], timeout_s=60)
    outcomes = {}
    for use in (True, False):
        runner = ForkServerRunner(workers=1, warm_code=use)
        try:
            result = runner.run(job)
        finally:
            runner.close()
        outcomes[use] = {r.nodeid: r.outcome.value for r in result.records}
    assert outcomes[True]["tests/test_probe.py::test_probe"] == "passed"
    assert outcomes[False]["tests/test_probe.py::test_probe"] == "failed"  # no table there
    del outcomes[True]["tests/test_probe.py::test_probe"]
    del outcomes[False]["tests/test_probe.py::test_probe"]
    assert (
        outcomes[True]
        == outcomes[False]
        == {
            "tests/test_calc.py::test_add": "passed",
            "tests/test_calc.py::test_add_wrong": "failed",
        }
    )
