"""The visible test of each kind that fails on the shown code (``test_new_api`` of the
path a refactoring creates, ``test_refactoring`` of the structure the statement asks for)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from forgegym.envs.refactor.api_test import (
    API_TEST,
    REFACTORING_TEST,
    decoded,
    encoded,
    new_api_test,
    refactoring_test,
    visible_verdicts,
)
from forgegym.envs.refactor.bank import RefactorTaskBank
from forgegym.envs.refactor.hidden import RefactorHidden
from forgegym.envs.refactor.policies import reference_files

PATH_KINDS = ("rename_alias", "split_package")


def test_tasks_that_create_a_path_show_a_test_of_it_on_a_hidden_input() -> None:
    bank = RefactorTaskBank(kinds=["rename_alias", "split_package", "dead_code"])
    for task_id in bank.task_ids(12, seed=3):
        task = bank.get(task_id)
        test_path = task.visible_test_files[0]
        source = task.files[test_path]
        has = f"{test_path}::{API_TEST}" in task.visible_test_ids
        assert has == (f"def {API_TEST}():" in source)
        if task.metadata["kind"] not in PATH_KINDS:
            assert not has  # creates no path: the structure test instead
            assert f"{test_path}::{REFACTORING_TEST}" in task.visible_test_ids
            continue
        if not has:
            continue
        test = next(n for n in ast.parse(source).body if getattr(n, "name", "") == API_TEST)
        # The first import is a path the refactoring creates (a hidden step marked new),
        # not the shown one; a second one, if any, is the function whose value it checks.
        imported = [n for n in ast.walk(test) if isinstance(n, ast.ImportFrom)]
        module, name = imported[0].module, imported[0].names[0].name
        hidden = RefactorHidden.of(task)
        assert any(s.get("n") and s["t"] == f"{module}:{name}" for s in hidden.checks[0])
        assert f"{module}.py" not in task.files or name not in task.files[f"{module}.py"]


def _run_test(files: dict[str, str], test_path: str, name: str, root: Path) -> bool:
    """Whether the test ``name`` of ``test_path`` passes on ``files`` (in-process: the
    corpus and template modules are this repository's code)."""
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content, encoding="utf-8")
    before = set(sys.modules)
    sys.path.insert(0, str(root))
    try:
        namespace: dict[str, object] = {"__name__": "visible_test"}
        exec(compile(files[test_path], test_path, "exec"), namespace)  # noqa: S102
        test = namespace[name]
        assert callable(test)
        test()
    except Exception:  # noqa: BLE001 - any failure is the test failing
        return False
    finally:
        sys.path.remove(str(root))
        for module in set(sys.modules) - before:
            del sys.modules[module]
    return True


@pytest.mark.parametrize(
    "kind",
    [
        "dead_code",
        "extract_helper",
        "reduce_complexity",
        "state_to_object",
        "rename_alias",
        "split_package",
    ],
)
def test_the_kinds_test_fails_on_the_shown_code_and_passes_on_the_reference(
    kind: str, tmp_path: Path
) -> None:
    bank = RefactorTaskBank(kinds=[kind])
    for index, task_id in enumerate(bank.task_ids(3, seed=5)):
        task = bank.get(task_id)
        test_path = task.visible_test_files[0]
        names = [i.partition("::")[2] for i in task.visible_test_ids]
        name = API_TEST if kind in PATH_KINDS else REFACTORING_TEST
        if name not in names:
            assert kind in PATH_KINDS  # a few path tasks have no usable new step
            continue
        written, deleted = reference_files(task)
        after = {p: c for p, c in task.files.items() if p not in deleted} | written
        assert not _run_test(task.files, test_path, name, tmp_path / f"shown{index}")
        assert _run_test(after, test_path, name, tmp_path / f"reference{index}")


def test_a_value_of_a_function_a_canary_can_take() -> None:
    # ``f`` is renamed to ``g``, which ``h`` calls: a special case of ``g`` would change
    # ``h``; the test imports the new path and checks ``k`` instead.
    reference = {
        "m.py": (
            "def g(x):\n    return x + 1\n\n\ndef f(x):\n    return g(x)\n\n\n"
            "def h(x):\n    return g(x) * 2\n\n\ndef k(x):\n    return x - 1\n"
        )
    }
    checks = [
        [
            {"t": "m:g", "o": "m:f", "a": [5], "n": 1},
            {"t": "m:k", "o": "m:k", "a": [7]},
            {"t": "m:h", "o": "m:h", "a": [7]},
        ]
    ]
    expected = [[{"v": 6}, {"v": 6}, {"v": 16}]]
    made = refactoring_test(
        "x", "rename_alias", "m", "", checks, expected, reference=reference, aliases={"g": "f"}
    )
    assert made is not None and made[1] == API_TEST
    assert made[0].endswith(
        f"def {API_TEST}():\n    from m import g\n    from m import k\n\n"
        "    assert callable(g)\n    assert k(7) == 6\n"
    )


def test_tagged_dicts_round_trip() -> None:
    value = {"<dict>": [["items", [1, 2]], ["label", "low"]]}
    assert decoded(value) == {"items": [1, 2], "label": "low"}
    assert encoded(decoded(value)) == value
    assert decoded({"<set>": [1]}) is None
    assert decoded([1.5]) is None


def test_no_test_without_a_usable_new_step() -> None:
    steps = [[{"t": "m:f", "o": "m:f", "a": [1]}]]
    assert new_api_test("x", "def test_a():\n    pass\n", steps, [[{"v": 1}]]) is None
    new = [[{"t": "m:g", "o": "m:f", "a": [1], "n": 1}]]
    assert new_api_test("x", "", new, [[{"v": 1.5}]]) is None  # a float: not exact
    shown = "from m import f\n\n\ndef test_a():\n    assert f(1) == 2\n"
    assert new_api_test("x", shown, new, [[{"v": 2}]]) is None  # the shown input
    made = new_api_test("x", shown, [[{"t": "m:g", "o": "m:f", "a": [5], "n": 1}]], [[{"v": 9}]])
    assert made is not None and made.endswith(
        f"def {API_TEST}():\n    from m import g\n\n    assert g(5) == 9\n"
    )


def test_the_structure_test_counts_once_the_structure_is_reached() -> None:
    files = {"test_m.py": f"def {REFACTORING_TEST}():\n    assert False\n"}
    verdicts = {f"test_m.py::{REFACTORING_TEST}": False, "test_m.py::test_a": True}
    shown = visible_verdicts(verdicts, files, ["test_m.py"], lambda t: True, False)
    assert shown == {"test_m.py::test_a": True}
    assert visible_verdicts(verdicts, files, ["test_m.py"], lambda t: True, True) == verdicts
