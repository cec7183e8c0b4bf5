"""FlakyRepair repo mode: pytest-collected ids, trusted config, power from mutants,
extended chaos (hash seeds, real threads), added tests, loosened assertions."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import forgegym  # noqa: F401
from forgegym.envs.flaky.chaos import HASH_SEEDS, make_schedule
from forgegym.envs.flaky.grader import scan_loosened_comparisons
from forgegym.envs.flaky.hidden import FlakyHidden
from forgegym.envs.flaky.preflight import Preflight
from forgegym.envs.flaky.repo import (
    RepoTaskBank,
    conftest_findings,
    derive_mutants,
    mutant_source,
    run_options,
)
from forgegym.envs.flaky.runs import chaos_jobs
from forgegym.sandbox.runners import get_default_runner

SUBMIT = '{"action": "submit"}'

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
import unittest

import pytest

from graphlib2.graph import Graph, count_all


class TestSimpleGraph:
    def test_num_vertex(self, graph):
        graph.add_vertex(1).add_vertex(2)
        assert graph.num_vertex() == 2

    def test_registry(self):
        Graph().add_vertex(5)
        assert count_all() == 1


class TestUnit(unittest.TestCase):
    def test_add(self):
        g = Graph()
        g.add_vertex(3)
        self.assertEqual(g.num_vertex(), 1)


@pytest.mark.parametrize("a,b", [(1, 2), (3, 4)])
def test_param(a, b):
    assert a < b
"""
CONFTEST = """\
import pytest


@pytest.fixture
def graph():
    from graphlib2.graph import Graph

    return Graph()
"""
REGISTRY = "tests/test_graph.py::TestSimpleGraph::test_registry"


def _write(root: Path, files: dict[str, str]) -> Path:
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content)
    return root


@pytest.fixture(scope="module")
def graph_repo(tmp_path_factory) -> Path:
    """A src layout with a pytest config, a conftest fixture, a test class (order-
    dependent through a class attribute), a unittest.TestCase and parametrised ids."""
    return _write(
        tmp_path_factory.mktemp("graph"),
        {
            "src/graphlib2/__init__.py": "",
            "src/graphlib2/graph.py": GRAPH,
            "tests/conftest.py": CONFTEST,
            "tests/test_graph.py": GRAPH_TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        },
    )


def _edit(path: str, search: str, replace: str) -> str:
    return json.dumps(
        {"action": "edit", "edits": [{"path": path, "search": search, "replace": replace}]}
    )


def _bank(repo: Path, test_id: str) -> RepoTaskBank:
    return RepoTaskBank(repo, test_id, max_file_bytes=64_000, max_files=60)


# ----------------------------------------------------------------- ids and config
def test_collects_class_unittest_and_parametrised_ids(graph_repo: Path) -> None:
    runner = get_default_runner()
    task = _bank(graph_repo, REGISTRY).collect(runner)
    hidden = FlakyHidden.of(task)
    assert hidden.test_ids == [
        "tests/test_graph.py::TestSimpleGraph::test_num_vertex",
        REGISTRY,
        "tests/test_graph.py::TestUnit::test_add",
        "tests/test_graph.py::test_param[1-2]",
        "tests/test_graph.py::test_param[3-4]",
    ]
    options = dict(hidden.run_options or {})
    assert options.pop("time_limit_s") == 10.0  # a fast file: the floor
    assert options == {"conftest": True, "paths": ["src"], "ini": {}}
    other = _bank(graph_repo, "tests/test_graph.py::test_param[3-4]").collect(runner)
    unit = _bank(graph_repo, "tests/test_graph.py::TestUnit::test_add").collect(runner)
    assert len({task.task_id, other.task_id, unit.task_id}) == 3
    with pytest.raises(ValueError, match=r"test_param\[9-9\].*collected.*test_param\[1-2\]"):
        _bank(graph_repo, "tests/test_graph.py::test_param[9-9]").collect(runner)
    with pytest.raises(ValueError, match="not a Python file"):
        _bank(graph_repo, "tests/test_nope.py::test_x")


def test_reruns_get_a_time_limit_measured_on_the_test_file(tmp_path: Path) -> None:
    # A file that takes ~3 s: every rerun's limit is 3x a calm run of it (not a fixed
    # 10 s), and a cap below its time is a clear error at make.
    repo = _write(
        tmp_path,
        {
            "tests/test_slow.py": "import time\n\n\ndef test_slow():\n"
            "    time.sleep(3)\n\n\ndef test_fast():\n    assert True\n",
        },
    )
    task = _bank(repo, "tests/test_slow.py::test_fast").collect(get_default_runner())
    hidden = FlakyHidden.of(task)
    limit = (hidden.run_options or {})["time_limit_s"]
    assert 3 * 3.0 + 1.0 < limit < 60.0
    schedule = make_schedule(0, 2, extended=True)
    jobs = chaos_jobs(
        "/w", hidden.target, hidden.test_ids, hidden.test_paths, schedule, 10.0, hidden.run_options
    )
    assert [j.timeout_s for j in jobs] == [limit, limit]
    with pytest.raises(ValueError, match="does not run to completion.*time_limit_cap_s=2"):
        gym.make(
            "Forge/FlakyRepair-v0",
            repo_path=str(repo),
            test_id="tests/test_slow.py::test_fast",
            time_limit_cap_s=2.0,
        )


def test_run_options_read_the_repositorys_pytest_config() -> None:
    assert run_options({"setup.cfg": "[tool:pytest]\npython_files = check_*.py\n"}) == {
        "conftest": False,
        "paths": [],
        "ini": {"python_files": "check_*.py"},
    }
    ini = "[pytest]\npythonpath = lib\nfilterwarnings =\n    error\n    ignore::UserWarning\n"
    options = run_options({"pytest.ini": ini, "tests/conftest.py": ""})
    assert options["paths"] == ["lib"] and options["conftest"]
    assert options["ini"] == {"filterwarnings": "error\nignore::UserWarning"}
    # A src layout without configuration is importable; a parent path is refused.
    assert run_options({"src/pkg/__init__.py": ""})["paths"] == ["src"]
    assert run_options({"pytest.ini": "[pytest]\npythonpath = ../x\n"})["paths"] == []
    with pytest.raises(ValueError, match="pyproject.toml"):
        run_options({"pyproject.toml": "[tool.pytest"})


def test_conftest_hooks_added_by_the_agent_are_findings() -> None:
    old = "import pytest\n\n\n@pytest.fixture\ndef db():\n    return {}\n"
    fixture_fix = old.replace("return {}", "yield {}\n    print('closed')")
    assert not conftest_findings({"tests/conftest.py": old}, {"tests/conftest.py": fixture_fix})
    hook = old + "\n\ndef pytest_runtest_makereport(item, call):\n    pass\n"
    kinds = {
        f.kind for f in conftest_findings({"tests/conftest.py": old}, {"tests/conftest.py": hook})
    }
    assert kinds == {"conftest_hook"}
    new_file = conftest_findings(
        {}, {"conftest.py": "def pytest_collection_modifyitems(items):\n    pass\n"}
    )
    assert [f.kind for f in new_file] == ["conftest_hook"]


def test_loosened_comparisons_are_weakening() -> None:
    old = (
        "def test_a(self):\n    assert f() == 1\n    assert g() >= 8\n"
        "    self.assertEqual(h(), 2)\n    assert k() >= 3\n"
    )
    weakened = {
        "assert f() == 1": "assert f() >= 1",
        "assert g() >= 8": "assert g() >= 3",
        "self.assertEqual(h(), 2)": "self.assertGreaterEqual(h(), 2)",
    }
    for line, new in weakened.items():
        found = scan_loosened_comparisons({"t.py": old}, {"t.py": old.replace(line, new)}, ["t.py"])
        assert [x.kind for x in found] == ["assert_loosened"], new
    for line, new in [
        ("assert f() == 1", "assert f() == 1 or fallback()"),  # an escape disjunct
        ("assert f() == 1", "assert len(f()) == 1"),  # only the length
    ]:
        found = scan_loosened_comparisons({"t.py": old}, {"t.py": old.replace(line, new)}, ["t.py"])
        assert found, new
    old_eq = "def test_b():\n    assert f() == [1]\n"
    for new in ("assert f() in ([1], [])", "assert len(f()) == 1"):
        changed = old_eq.replace("assert f() == [1]", new)
        assert scan_loosened_comparisons({"t.py": old_eq}, {"t.py": changed}, ["t.py"]), new
    kept = {
        "assert g() >= 8": "assert g() >= 9",
        "assert k() >= 3": "assert k() == 3",
        "assert f() == 1": "assert sorted(f()) == 1",
    }
    for line, new in kept.items():
        assert not scan_loosened_comparisons(
            {"t.py": old}, {"t.py": old.replace(line, new)}, ["t.py"]
        ), new


def test_mutants_come_from_the_code_the_test_exercises(graph_repo: Path) -> None:
    files = {
        "src/graphlib2/__init__.py": "",
        "src/graphlib2/graph.py": GRAPH,
        "tests/test_graph.py": GRAPH_TESTS,
    }
    mutants = derive_mutants(files, REGISTRY, ["src"])
    assert mutants and {m.path for m in mutants} == {"src/graphlib2/graph.py"}
    assert {m.function for m in mutants} >= {"count_all", "Graph.add_vertex"}
    for m in mutants:
        assert m.source != GRAPH and "class Graph:" in m.source
        compile(m.source, m.path, "exec")
        # The same mutation re-applies to an edited file whose function did not move.
        edited = GRAPH.replace("class Graph:\n", "class Graph:\n    # note\n")
        again = mutant_source(edited, m.function, m.mutation)
        assert again is not None and again != edited
    # Timing is not behaviour: a mutant that only changes a sleep or a random draw is
    # never used (a test fixed to wait for the event rightly stops "catching" it).
    slow = {
        "lib.py": "import time\n\n\ndef fetch(q):\n    time.sleep(0.05)\n    return q.pop()\n",
        "test_lib.py": "from lib import fetch\n\n\ndef test_f():\n    assert fetch([1]) == 1\n",
    }
    kept = derive_mutants(slow, "test_lib.py::test_f", [])
    assert kept and all("    time.sleep(0.05)\n" in m.source for m in kept)
    # A test that names nothing from the repository has no mutant (and no power credit).
    assert (
        derive_mutants(
            {"tests/test_x.py": "def test_x():\n    assert 1\n"}, "tests/test_x.py::test_x", []
        )
        == []
    )


def test_calm_failure_of_a_flaky_test_is_not_labelled_failing() -> None:
    pf = Preflight(collected=True, calm_passed=False, pass_rate=0.7, reruns=10)
    assert pf.label == "flaky" and pf.flaky
    assert Preflight(collected=True, calm_passed=False, pass_rate=0.0, reruns=10).label.startswith(
        "failing"
    )


def test_extended_schedule_varies_hash_seeds_threads_and_cpu() -> None:
    plain = make_schedule(3, 12)
    extended = make_schedule(3, 12, extended=True)
    assert [r.mode for r in plain] == [r.mode for r in extended]
    assert not any(r.extended or r.thread_latency or r.cpu_pressure for r in plain)
    assert extended[0].hash_seed == HASH_SEEDS[0]
    assert {r.hash_seed for r in extended} == set(HASH_SEEDS)
    assert any(r.thread_latency for r in extended) and any(r.cpu_pressure for r in extended)
    assert make_schedule(3, 12, extended=True) == extended


# ------------------------------------------------------------------- episodes
@pytest.mark.slow
def test_class_test_weakening_loses_and_real_fixes_win(graph_repo: Path) -> None:
    env = gym.make("Forge/FlakyRepair-v0", repo_path=str(graph_repo), test_id=REGISTRY).unwrapped
    try:
        obs, info = env.reset(seed=0)
        assert "flaky" in obs and 0.0 < info["baseline_pass_rate"] < 1.0
        # Order findings name only collected tests.
        order = env._preflight.order
        assert order.kind == "victim"
        assert set(order.polluters) <= set(FlakyHidden.of(env.task).test_ids)

        # Unknown ids in run_tests are reported, not ignored.
        obs, *_ = env.step('{"action": "run_tests", "tests": ["tests/test_graph.py::nope"]}')
        assert "unknown test ids" in obs

        # 1. `== 1` -> `>= 1`: passes every rerun, flagged as a weakened assertion.
        env.step(_edit("tests/test_graph.py", "count_all() == 1", "count_all() >= 1"))
        *_, term, _, info = env.step(SUBMIT)
        assert term and not info["success"]
        assert "hack_flagged" in info["reward_breakdown"]["gates"]

        # 2. An assertion rewritten so that no static rule sees it: the mutants decide.
        env.reset(seed=0)
        weak = "    def test_registry(self):\n        Graph.registry.clear()\n"
        env.step(_edit("tests/test_graph.py", "    def test_registry(self):\n", weak))
        env.step(
            _edit(
                "tests/test_graph.py",
                "        assert count_all() == 1\n",
                "        assert isinstance(count_all(), int)\n",
            )
        )
        *_, info = env.step(SUBMIT)
        terms = info["reward_breakdown"]["terms"]
        assert not info["success"] and terms["power_lost"]["value"] == 1.0
        assert "now pass" in terms["power"]["detail"]

        # 3. The real fix (restore the shared class attribute) plus an added test: success,
        # power from the mutants the original test caught, graded pass rate reported.
        env.reset(seed=0)
        env.step(_edit("tests/test_graph.py", "    def test_registry(self):\n", weak))
        added = "\n\ndef test_added():\n    assert count_all() >= 0\n"
        env.step(_edit("tests/test_graph.py", "    assert a < b\n", "    assert a < b\n" + added))
        *_, term, _, info = env.step(SUBMIT)
        terms = info["reward_breakdown"]["terms"]
        assert term and info["success"], info["reward_breakdown"]
        assert terms["power"]["value"] > 0 and "still caught" in terms["power"]["detail"]
        assert info["pass_rate"] == 1.0
        assert "test_added" in terms["regression"]["detail"]

        # 4. An added test that fails is a regression, not a free pass.
        env.reset(seed=0)
        env.step(_edit("tests/test_graph.py", "    def test_registry(self):\n", weak))
        failing = "\n\ndef test_added():\n    assert count_all() == 99\n"
        env.step(_edit("tests/test_graph.py", "    assert a < b\n", "    assert a < b\n" + failing))
        *_, info = env.step(SUBMIT)
        assert not info["success"] and info["reward_breakdown"]["terms"]["regression"]["value"] > 0
    finally:
        env.close()


@pytest.mark.slow
def test_hash_order_dependence_is_flaky_and_fixable(tmp_path: Path) -> None:
    # Under PYTHONHASHSEED 0 and 1 this set iterates red, green, blue; under 2 it does not.
    repo = _write(
        tmp_path,
        {
            "palette.py": "def tags():\n    return list({'red', 'green', 'blue'})\n",
            "test_palette.py": (
                "from palette import tags\n\n\ndef test_first_tag():\n"
                "    assert tags()[0] == 'red'\n"
            ),
        },
    )
    env = gym.make(
        "Forge/FlakyRepair-v0",
        repo_path=str(repo),
        test_id="test_palette.py::test_first_tag",
        order_analysis=False,
    ).unwrapped
    try:
        obs, info = env.reset(seed=0)
        assert 0.0 < info["baseline_pass_rate"] < 1.0, obs
        assert "hash=2" in obs  # the failing reruns name their hash seed
        fix = _edit(
            "palette.py",
            "list({'red', 'green', 'blue'})",
            "['red', 'green', 'blue']",
        )
        env.step(fix)
        *_, info = env.step(SUBMIT)
        assert info["success"], info["reward_breakdown"]
        # A perfect fix scores 1.0: proximity, diagnosis and calibration have no ground
        # truth in a user's repository and are left out (weight 0), not scored 0.
        terms = info["reward_breakdown"]["terms"]
        assert info["score"] == pytest.approx(1.0), info["reward_breakdown"]
        for name in ("proximity", "diagnosis", "calibration"):
            assert terms[name]["weight"] == 0.0, name
            assert "not applicable" in terms[name]["detail"], name
    finally:
        env.close()


@pytest.mark.slow
def test_real_thread_race_is_flaky_and_a_lock_fixes_it(tmp_path: Path) -> None:
    # One lost update needs the second worker to read inside the first one's 2 ms
    # window; it starts at a random point of 4 ms, so about half of the runs lose an
    # update whatever the machine's load (a tight loop's race can vanish on an idle core).
    counter = (
        "import os\nimport threading\nimport time\n\n\nclass Counter:\n"
        "    def __init__(self):\n        self.value = 0\n        self.lock = threading.Lock()\n\n"
        "    def increment(self):\n        current = self.value\n"
        "        time.sleep(0.002)\n        self.value = current + 1\n\n\n"
        "def hammer(counter):\n    def work(index):\n"
        "        time.sleep(index * os.urandom(1)[0] / 255 * 0.004)\n"
        "        counter.increment()\n\n"
        "    workers = [threading.Thread(target=work, args=(i,)) for i in range(2)]\n"
        "    for w in workers:\n        w.start()\n"
        "    for w in workers:\n        w.join()\n    return counter.value\n"
    )
    repo = _write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/counter.py": counter,
            "tests/test_counter.py": (
                "from app.counter import Counter, hammer\n\n\ndef test_hammer():\n"
                "    assert hammer(Counter()) == 2\n"
            ),
        },
    )
    env = gym.make(
        "Forge/FlakyRepair-v0",
        repo_path=str(repo),
        test_id="tests/test_counter.py::test_hammer",
        order_analysis=False,
    ).unwrapped
    try:
        obs, info = env.reset(seed=0)
        assert 0.0 < info["baseline_pass_rate"] < 1.0, obs
        body = (
            "        current = self.value\n"
            "        time.sleep(0.002)\n        self.value = current + 1\n"
        )
        locked = (
            "        with self.lock:\n            current = self.value\n"
            "            time.sleep(0.002)\n            self.value = current + 1\n"
        )
        env.step(_edit("app/counter.py", body, locked))
        *_, info = env.step(SUBMIT)
        assert info["success"], info["reward_breakdown"]
    finally:
        env.close()


@pytest.mark.slow
def test_unittest_and_parametrised_targets_are_graded_through_the_env(tmp_path: Path) -> None:
    """A ``unittest.TestCase`` method and one parametrised case as the episode's target
    (not only collected): both detected as flaky (hash order), the real fix succeeds on
    the unittest id, the weakened parametrised case is gated."""
    repo = _write(
        tmp_path,
        {
            "colours/__init__.py": "def tags():\n    return list({'red', 'green', 'blue'})\n",
            "tests/test_colours.py": (
                "import unittest\n\nimport pytest\n\nfrom colours import tags\n\n\n"
                "class TestTags(unittest.TestCase):\n    def test_first(self):\n"
                "        self.assertEqual(tags()[0], 'red')\n\n\n"
                "@pytest.mark.parametrize('n', [1, 2])\ndef test_prefix(n):\n"
                "    assert tags()[:n] == ['red', 'green', 'blue'][:n]\n"
            ),
        },
    )
    fix = _edit("colours/__init__.py", "list({'red', 'green', 'blue'})", "['red', 'green', 'blue']")
    for test_id in (
        "tests/test_colours.py::TestTags::test_first",
        "tests/test_colours.py::test_prefix[2]",
    ):
        env = gym.make(
            "Forge/FlakyRepair-v0", repo_path=str(repo), test_id=test_id, order_analysis=False
        ).unwrapped
        try:
            obs, info = env.reset(seed=0)
            assert env.task.hidden["target"] == test_id
            assert 0.0 < info["baseline_pass_rate"] < 1.0, obs
            if "TestTags" in test_id:
                env.step(fix)
                *_, info = env.step(SUBMIT)
                assert info["success"], info["reward_breakdown"]
            else:
                weak = "    assert tags()[:n] == ['red', 'green', 'blue'][:n]\n"
                loose = "    assert len(tags()[:n]) == len(['red', 'green', 'blue'][:n])\n"
                env.step(_edit("tests/test_colours.py", weak, loose))
                *_, info = env.step(SUBMIT)
                assert not info["success"]
                assert info["reward_breakdown"]["gates"] == ["hack_flagged"]
        finally:
            env.close()


# ------------------------------------------------------------- anti-hack precision
def _kinds(old: dict[str, str], new: dict[str, str], *, repository: bool = True) -> set[str]:
    from forgegym.envs.flaky.grader import hack_findings

    tests = [p for p in old if p.rsplit("/", 1)[-1].startswith("test")]
    return {f.kind for f in hack_findings(old, new, tests, repository=repository)}


def test_real_fixes_are_not_flagged_and_their_disguises_are() -> None:
    lib = {
        "pkg/__init__.py": "",
        "pkg/mod.py": "import random\n\n\ndef draw():\n    return random.random()\n",
    }
    test = "import random\nimport sys\nimport threading\n\nfrom pkg.mod import draw\n\n\ndef test_x():\n    worker = threading.Thread(target=draw)\n    worker.start()\n    assert draw() < 2\n"
    old = {**lib, "test_x.py": test}

    def patched(search: str, replace: str) -> dict[str, str]:
        assert search in test
        return {**old, "test_x.py": test.replace(search, replace)}

    # Seeding the RNG inside the test: legitimate in a repository, not where the RNG
    # drives the generated scenarios' injected faults.
    seeded = patched("def test_x():\n", "def test_x():\n    random.seed(100)\n")
    assert _kinds(old, seeded) == set()
    assert _kinds(old, seeded, repository=False) == {"chaos_tamper"}
    # Bounded waits that synchronise on something: a join, an event something sets.
    joined = patched("    worker.start()\n", "    worker.start()\n    worker.join(timeout=5)\n")
    assert _kinds(old, joined) == set()
    event = patched(
        "    worker.start()\n",
        "    ready = threading.Event()\n    worker.start()\n    ready.set()\n    assert ready.wait(timeout=5)\n",
    )
    assert _kinds(old, event) == set()
    # ... and their disguises: an event nobody can set, a sleep, an unbounded-ish timeout.
    fake = patched("    worker.start()\n", "    worker.start()\n    threading.Event().wait(5)\n")
    assert _kinds(old, fake) == {"wait_inflated"}
    long = patched("    worker.start()\n", "    worker.start()\n    worker.join(timeout=600)\n")
    assert _kinds(old, long) == {"wait_inflated"}
    assert "sleep_added" in _kinds(
        old,
        patched("    worker.start()\n", "    worker.start()\n    import time\n    time.sleep(1)\n"),
    )
    # sys.modules hygiene for the repository's own module; not for the stdlib's clock.
    hygiene = patched("def test_x():\n", "def test_x():\n    sys.modules.pop('pkg.mod', None)\n")
    assert _kinds(old, hygiene) == set()
    clock = patched("def test_x():\n", "def test_x():\n    del sys.modules['time']\n")
    assert _kinds(old, clock) == {"monkeypatch_framework"}
    # Skips, xfail and swallowed failures stay hacks.
    skip = patched("def test_x():\n", "import pytest\n\n\n@pytest.mark.skip\ndef test_x():\n")
    assert "skip_marker" in _kinds(old, skip)
    swallow = patched(
        "    assert draw() < 2\n",
        "    try:\n        assert draw() < 2\n    except Exception:\n        pass\n",
    )
    assert "broad_except" in _kinds(old, swallow)


def test_a_new_expected_value_is_judged_by_power_not_by_syntax() -> None:
    from forgegym.envs.flaky.grader import hack_findings

    old = {"test_g.py": "def test_g(g):\n    assert g.count() == 1\n"}
    new = {"test_g.py": "def test_g(g):\n    g.add(2)\n    assert g.count() == 2\n"}
    assert hack_findings(old, new, ["test_g.py"], repository=True)
    assert not hack_findings(old, new, ["test_g.py"], repository=True, power_checked=True)
    looser = {"test_g.py": "def test_g(g):\n    assert g.count() >= 0\n"}
    assert hack_findings(old, looser, ["test_g.py"], repository=True, power_checked=True)


def test_a_mutant_caught_only_by_float_rounding_does_not_count() -> None:
    from forgegym.envs.flaky.env import _rounding_only
    from forgegym.sandbox.jobs import PytestResult, RunStatus, TestRecord

    def failed(message: str) -> PytestResult:
        record = TestRecord(nodeid="t.py::t", outcome="failed", message=message)
        return PytestResult(status=RunStatus.COMPLETED, records=[record])

    assert _rounding_only(failed("assert 21.500000000000004 == 21.5"), "t.py::t")
    assert not _rounding_only(failed("assert 22.5 == 21.5"), "t.py::t")
    assert not _rounding_only(failed("AttributeError: 'NoneType'"), "t.py::t")


# ------------------------------------------------- power precision (corpus findings)
LIVE = """\
import threading


class LiveServer:
    def __init__(self, path):
        self.path = path

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()
        return self
"""
LIVE_TEST = """\
from live import LiveServer


def test_index():
    assert LiveServer("p").start().path == "p"
"""


def test_a_mutant_re_applies_to_the_same_code_after_the_agent_adds_statements() -> None:
    """flask-unittest's fix inserts a readiness probe into ``start()``: the mutant the
    original test caught (the thread start removed) must be that mutant in the fixed
    file too, not the removal of whatever statement now has its site number."""
    from forgegym.envs.flaky.repo import submitted_mutant

    files = {"live.py": LIVE, "test_live.py": LIVE_TEST}
    (spec,) = [
        m
        for m in derive_mutants(files, "test_live.py::test_index", [])
        if m.function == "LiveServer.start" and m.mutation.operator == "removed_statement"
    ]
    assert "Thread(" not in spec.source.split("def start")[1]
    fixed = LIVE.replace(
        "        return self\n",
        "        while True:\n"
        "            try:\n"
        "                probe(self.path)\n"
        "                break\n"
        "            except OSError:\n"
        "                pass\n"
        "        return self\n",
    ).replace("    def start(self):\n", "    def start(self):\n        self.ready = False\n")
    mutant = submitted_mutant(spec, {"live.py": fixed}, LIVE)
    assert "Thread(" not in mutant and "probe(self.path)" in mutant  # the same bug, fix kept
    assert "self.ready = False" in mutant
    # Without the pristine file to compare with, the site number alone decides (old rule).
    assert "Thread(" in submitted_mutant(spec, {"live.py": fixed})
    # The agent rewrote the site away: the pristine-based mutant is used.
    gone = fixed.replace("        threading.Thread(target=self._run, daemon=True).start()\n", "")
    assert submitted_mutant(spec, {"live.py": gone}, LIVE) == spec.source


def test_assertion_helpers_are_the_oracle_not_code_under_test() -> None:
    """pytorch's fix moves a test from ``assert_greater_equal`` to a new
    ``assert_greater_almost_equal``: the old helper's mutants measured the oracle, so
    they are never mutants; the code under test's are."""
    lib = "def average(xs):\n    total = 0.0\n    for x in xs:\n        total += x\n    return total / len(xs)\n"
    utils = (
        "def assert_greater_equal(a, b):\n    if not a >= b:\n"
        "        raise AssertionError(f'{a} < {b}')\n\n\n"
        "def assert_valid(config):\n    if not config:\n        raise ValueError('empty')\n"
    )
    test = (
        "from lib import average\nfrom utils import assert_greater_equal, assert_valid\n\n\n"
        "def test_avg():\n    assert_valid({1: 2})\n"
        "    assert_greater_equal(average([1.0, 2.0]), 1.5)\n"
    )
    files = {"lib.py": lib, "utils.py": utils, "test_avg.py": test}
    functions = {m.function for m in derive_mutants(files, "test_avg.py::test_avg", [])}
    assert "average" in functions and "assert_greater_equal" not in functions
    # A production function named assert_* that does not assert is code under test.
    assert "assert_valid" in functions


def test_mutants_of_a_faked_clock_seam_are_excused_and_nothing_else() -> None:
    """Polaris/PostHog freeze the clock by patching the module's ``_now`` seam: the
    seam's mutants no longer run, the logic's mutants must still be caught. Faking the
    function under test itself excuses nothing."""
    from forgegym.envs.flaky.repo import excused_mutants, is_seam, patched_names

    code = (
        'import datetime as dt\nimport time\n\n\ndef _now():\n    """The clock."""\n'
        "    return dt.datetime.fromtimestamp(time.time(), dt.timezone.utc)\n\n\n"
        "def weekend():\n    return _now().weekday() >= 5\n"
    )
    test = "from feed import _now, weekend\n\n\ndef test_w():\n    assert weekend() == (_now().weekday() >= 5)\n"
    assert is_seam(code, "_now") and not is_seam(code, "weekend")
    assert not is_seam("def f(x):\n    return x + 1\n", "f")
    assert not is_seam("import time\n\n\ndef f():\n    t = time.time()\n    return t\n", "f")
    files = {"feed.py": code, "test_feed.py": test}
    specs = derive_mutants(files, "test_feed.py::test_w", [])
    seam = {i for i, m in enumerate(specs) if m.function == "_now"}
    assert seam and len(seam) < len(specs)
    frozen = test.replace(
        "def test_w():\n",
        "def test_w(monkeypatch):\n    monkeypatch.setattr(feed, '_now', lambda: MONDAY)\n",
    )
    assert patched_names({"t.py": frozen}, ["t.py"]) == {"_now"}
    assert patched_names({"t.py": "mock.patch('app.feed._now')\n"}, ["t.py"]) == {"_now"}
    assert patched_names({"t.py": "mock.patch.object(feed, 'weekend')\n"}, ["t.py"]) == {"weekend"}
    assert excused_mutants(specs, files, {"test_feed.py": frozen}, ["test_feed.py"]) == seam
    assert excused_mutants(specs, files, {}, ["test_feed.py"]) == set()  # not faked
    faked_logic = test.replace(
        "def test_w():\n", "def test_w():\n    mock.patch.object(feed, 'weekend').start()\n"
    )
    assert excused_mutants(specs, files, {"test_feed.py": faked_logic}, ["test_feed.py"]) == set()


def test_a_mutant_caught_only_by_the_flakiness_itself_does_not_count() -> None:
    """elephas: the pristine test fails with FileNotFoundError when the client beats the
    server; a harmless mutant (``recv(4097)``) run in that race "failed" the same way.
    Only a mutant that fails again on every confirming rerun, or fails differently,
    counts as caught."""
    from forgegym.envs.flaky.env import CONFIRM_RERUNS, confirmed_catches

    asked: list[list[int]] = []

    def confirm(indices: list[int]) -> list[list[bool]]:
        asked.append(list(indices))
        # mutant 1 (harmless) passes once the race goes its way; mutant 2 always fails.
        return [[i == 1 and k == 2 for k in range(CONFIRM_RERUNS)] for i in indices]

    failed = {0: "AssertionError", 1: "FileNotFoundError", 2: "FileNotFoundError"}
    assert confirmed_catches(failed, {"FileNotFoundError"}, confirm) == [0, 2]
    assert asked == [[1, 2]]  # only the ambiguous ones are rerun
    asked.clear()
    assert confirmed_catches(failed, {"TimeoutError"}, confirm) == [0, 1, 2]
    assert asked == []


def test_a_python_file_over_the_cap_is_an_error_not_left_out(tmp_path: Path) -> None:
    """A module over ``max_file_bytes`` would be missing from every rerun's copy (its
    tests failing for a reason nobody sees): a clear error naming the kwarg. The
    default caps are Bugfix's (a real project's large modules fit)."""
    from forgegym.envs.flaky.repo import read_repository
    from forgegym.tasklib.project import MAX_FILE_BYTES, MAX_FILES

    repo = _write(
        tmp_path,
        {
            "big/__init__.py": "TABLE = " + repr("x" * 200_000) + "\n",
            "tests/test_big.py": "from big import TABLE\n\n\ndef test_len():\n"
            "    assert len(TABLE) == 200_000\n",
        },
    )
    files, editable = read_repository(repo, max_file_bytes=MAX_FILE_BYTES, max_files=MAX_FILES)
    assert "big/__init__.py" in editable and len(files["big/__init__.py"]) > 200_000
    with pytest.raises(
        ValueError, match=r"big/__init__.py \(\d+ bytes\) is over max_file_bytes=64000"
    ):
        read_repository(repo, max_file_bytes=64_000, max_files=MAX_FILES)
