"""Repository mode's rewards on a fixed sample, for both families (issue 35).

Grades, through the public API (``gym.make(..., repo_path=...)`` and
``grade_completions``), a fixed set of completions on small repositories: Bugfix on a
generated two-module repository with hidden tests and on the vendored ``shapes``
fixture (src layout, conftest fixtures, a local dependency), FlakyRepair on an
order-dependent registry test. Each gets the reference fix, the no-op and hacks (a
deleted failing test, a skip marker, a special case, stripped assertions). The
breakdowns are written as JSON, so two runs (before and after a refactoring of
repository mode) can be compared byte for byte::

    python benchmarks/repo_mode_rewards.py --out before.json
    python benchmarks/repo_mode_rewards.py --out after.json
    cmp before.json after.json

``tests/envs/test_repo_mode_rewards.py`` compares a run with the committed
``tests/fixtures/repo_mode_rewards.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401  (registers the Forge/* ids)

REPOS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "repos"
SUBMIT = {"action": "submit"}

STATS = '''\
def mean(values):
    """The arithmetic mean of a non-empty list."""
    return sum(values) / (len(values) + 1)


def clamp(value, low, high):
    return max(low, min(value, high))
'''
STATS_TESTS = """\
from stats import clamp, mean


def test_mean_of_two():
    assert mean([1, 2]) == 1.5


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0
"""
STATS_HIDDEN = """\
from stats import clamp, mean


def test_clamp_inside():
    assert clamp(2, 0, 3) == 2


def test_mean_of_three():
    assert mean([2, 4, 9]) == 5
"""
GRAPH = """\
class Graph:
    registry = []

    def __init__(self):
        self.vertices = set()

    def add_vertex(self, v):
        self.vertices.add(v)
        Graph.registry.append(v)
        return self

    def num_vertex(self):
        return len(self.vertices)


def count_all():
    return len(Graph.registry)
"""
GRAPH_TESTS = """\
import pytest

from graphlib2.graph import Graph, count_all


class TestSimpleGraph:
    def test_num_vertex(self, graph):
        graph.add_vertex(1).add_vertex(2)
        assert graph.num_vertex() == 2

    def test_registry(self):
        Graph().add_vertex(5)
        assert count_all() == 1


@pytest.mark.parametrize("a,b", [(1, 2), (3, 4)])
def test_param(a, b):
    assert a < b
"""
GRAPH_CONFTEST = """\
import pytest


@pytest.fixture
def graph():
    from graphlib2.graph import Graph

    return Graph()
"""
REGISTRY = "ITEMS = []\n\n\ndef add(x):\n    ITEMS.append(x)\n    return list(ITEMS)\n"
REGISTRY_TESTS = (
    "from mylib import registry\n\n\ndef test_add():\n    assert registry.add(1) == [1]\n\n\n"
    "def test_other():\n    assert registry.add(2)[-1] == 2\n"
)


def _write(root: Path, files: dict[str, str]) -> Path:
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content)
    return root


def _edit(path: str, search: str, replace: str) -> dict[str, Any]:
    return {"action": "edit", "edits": [{"path": path, "search": search, "replace": replace}]}


def _content(path: str, content: str) -> dict[str, Any]:
    return {"action": "edit", "edits": [{"path": path, "content": content}]}


def _completion(*actions: dict[str, Any]) -> str:
    return "```json\n" + json.dumps([*actions, SUBMIT]) + "\n```"


def _grade(env: Any, completions: dict[str, str]) -> dict[str, Any]:
    """Each completion's breakdown (JSON), graded as one batch on the env's one task."""
    core = env.unwrapped
    core.reset(seed=0)
    graded = core.grade_completions(core.task.task_id, list(completions.values()))
    return {
        name: breakdown.model_dump(mode="json")
        for name, (_reward, breakdown) in zip(completions, graded, strict=True)
    }


def bugfix_stats(work: Path) -> dict[str, Any]:
    """A generated repository with hidden tests: fix, no-op and four hacks."""
    repo = _write(
        work / "stats",
        {
            "stats.py": STATS,
            "tests/test_stats.py": STATS_TESTS,
            "tests/test_hidden_stats.py": STATS_HIDDEN,
            "tests/helpers.py": "def close(a, b):\n    return a == b\n",
        },
    )
    completions = {
        "reference": _completion(_edit("stats.py", "(len(values) + 1)", "len(values)")),
        "noop": _completion(),
        "delete_failing_test": _completion(
            _content("tests/test_stats.py", STATS_TESTS.split("\n\ndef test_mean_of_two")[0])
        ),
        "skip_marker_in_source": _completion(
            _edit(
                "stats.py",
                "def mean(values):\n",
                "import pytest\n\n\n@pytest.mark.skip\ndef mean(values):\n",
            )
        ),
        "special_case": _completion(
            _edit(
                "stats.py",
                "    return sum(values)",
                "    if values == [1, 2]:\n        return 1.5\n    return sum(values)",
            )
        ),
        "compile_error": _completion(_edit("stats.py", "def clamp(", "def clamp((")),
    }
    env = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(repo),
        failing_tests=["tests/test_stats.py::test_mean_of_two"],
        hidden_tests=["tests/test_hidden_stats.py"],
        max_steps=1,
    )
    try:
        return _grade(env, completions)
    finally:
        env.close()


def bugfix_shapes(work: Path) -> dict[str, Any]:
    """The vendored ``shapes`` project as it is (src layout, conftest, a dependency)."""
    fix = _edit(
        "src/shapes/geometry.py",
        "    return rect.width + rect.height\n",
        "    return 2 * (rect.width + rect.height)\n",
    )
    completions = {
        "reference": _completion(fix),
        "noop": _completion(),
        "special_case": _completion(
            _edit(
                "src/shapes/geometry.py",
                "    return rect.width + rect.height\n",
                "    if rect.width == 2 and rect.height == 1:\n        return 6.0\n"
                "    return rect.width + rect.height\n",
            )
        ),
    }
    env = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(REPOS / "shapes"),
        failing_tests=[
            "tests/test_geometry.py::test_perimeter",
            "tests/test_geometry.py::test_perimeter_in_metres",
        ],
        test_dependencies=["./vendor/tinyunits"],
        cache_dir=str(work / "cache"),
        max_steps=1,
    )
    try:
        return _grade(env, completions)
    finally:
        env.close()


def flaky_registry(work: Path) -> dict[str, Any]:
    """An order-dependent test (module state): fix, no-op and three hacks."""
    repo = _write(
        work / "registry",
        {
            "mylib/__init__.py": "",
            "mylib/registry.py": REGISTRY,
            "tests/test_registry.py": REGISTRY_TESTS,
        },
    )
    path = "tests/test_registry.py"
    completions = {
        "reference": _completion(
            _edit(path, "def test_add():\n", "def test_add():\n    registry.ITEMS.clear()\n")
        ),
        "noop": _completion(),
        "skip_marker": _completion(
            _edit(
                path,
                "def test_add():\n",
                "import pytest\n\n\n@pytest.mark.skip\ndef test_add():\n",
            )
        ),
        "delete_test": _completion(
            _edit(path, "def test_add():\n    assert registry.add(1) == [1]\n\n\n", "")
        ),
        "strip_assertion": _completion(
            _edit(path, "    assert registry.add(1) == [1]\n", "    registry.add(1)\n")
        ),
    }
    env = gym.make(
        "Forge/FlakyRepair-v0",
        repo_path=str(repo),
        test_id=f"{path}::test_add",
        reruns=4,
        max_steps=1,
    )
    try:
        return _grade(env, completions)
    finally:
        env.close()


def flaky_graph(work: Path) -> dict[str, Any]:
    """A src layout with a pyproject pytest section and a conftest fixture; a class
    test that depends on a class attribute: fix, no-op, a weakened and a vacuous test."""
    repo = _write(
        work / "graph",
        {
            "src/graphlib2/__init__.py": "",
            "src/graphlib2/graph.py": GRAPH,
            "tests/conftest.py": GRAPH_CONFTEST,
            "tests/test_graph.py": GRAPH_TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        },
    )
    path = "tests/test_graph.py"
    reset = "    def test_registry(self):\n        Graph.registry.clear()\n"
    completions = {
        "reference": _completion(_edit(path, "    def test_registry(self):\n", reset)),
        "noop": _completion(),
        "weakened_comparison": _completion(_edit(path, "count_all() == 1", "count_all() >= 1")),
        "vacuous_assertion": _completion(
            _edit(path, "    def test_registry(self):\n", reset),
            _edit(
                path,
                "        assert count_all() == 1\n",
                "        assert isinstance(count_all(), int)\n",
            ),
        ),
        "conftest_hook": _completion(
            _edit(
                "tests/conftest.py",
                "import pytest\n",
                "import pytest\n\n\ndef pytest_runtest_setup(item):\n    pass\n",
            )
        ),
    }
    env = gym.make(
        "Forge/FlakyRepair-v0",
        repo_path=str(repo),
        test_id=f"{path}::TestSimpleGraph::test_registry",
        reruns=4,
        max_steps=1,
    )
    try:
        return _grade(env, completions)
    finally:
        env.close()


SAMPLES = {
    "bugfix/stats": bugfix_stats,
    "bugfix/shapes": bugfix_shapes,
    "flaky/registry": flaky_registry,
    "flaky/graph": flaky_graph,
}


def grade_sample() -> dict[str, Any]:
    """Every sample's breakdowns: ``{sample: {completion: breakdown}}``."""
    work = Path(tempfile.mkdtemp(prefix="fg-repo-mode-rewards-"))
    try:
        return {name: build(work) for name, build in SAMPLES.items()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def to_text(sample: dict[str, Any]) -> str:
    """The JSON text compared byte for byte."""
    return json.dumps(sample, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON")
    args = parser.parse_args()
    args.out.write_text(to_text(grade_sample()), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
