"""The visible test of the API a refactoring creates (``test_new_api``)."""

from __future__ import annotations

import ast

from forgegym.envs.refactor.api_test import API_TEST, new_api_test
from forgegym.envs.refactor.bank import RefactorTaskBank
from forgegym.envs.refactor.hidden import RefactorHidden


def test_tasks_that_create_a_path_show_a_test_of_it_on_a_hidden_input() -> None:
    bank = RefactorTaskBank(kinds=["rename_alias", "split_package", "dead_code"])
    for task_id in bank.task_ids(12, seed=3):
        task = bank.get(task_id)
        test_path = task.visible_test_files[0]
        source = task.files[test_path]
        has = f"{test_path}::{API_TEST}" in task.visible_test_ids
        assert has == (f"def {API_TEST}():" in source)
        if task.metadata["kind"] == "dead_code":
            assert not has  # creates no path
            continue
        if not has:
            continue
        test = next(n for n in ast.parse(source).body if getattr(n, "name", "") == API_TEST)
        (imported,) = [n for n in ast.walk(test) if isinstance(n, ast.ImportFrom)]
        module, name = imported.module, imported.names[0].name
        hidden = RefactorHidden.of(task)
        # A path the refactoring creates (a hidden step marked new), not the shown one.
        assert any(s.get("n") and s["t"] == f"{module}:{name}" for s in hidden.checks[0])
        assert f"{module}.py" not in task.files or name not in task.files[f"{module}.py"]


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
