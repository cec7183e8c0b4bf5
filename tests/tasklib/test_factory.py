"""The real-code task factory: a small bank built offline from a vendored project, graded
through the Bugfix env; reproducibility; the cold-cache error."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.envs.bugfix.real import RealTaskBank
from forgegym.policies import NOOP_ACTION
from forgegym.tasklib.factory import (
    ColdCacheError,
    build_pinned,
    fetch_sdist,
    read_manifest,
    sha256_of,
)

CANDIDATES = 10
KEYS = {
    "id",
    "project",
    "version",
    "sha256",
    "file",
    "mutation",
    "shown",
    "f2p",
    "p2p",
    "collected",
    "modules",
    "report",
    "features",
    "level",
}
FIXTURE = Path(__file__).parents[1] / "fixtures" / "factory" / "textkit-1.0"


def _sdist(cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / "textkit-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        archive.add(
            FIXTURE,
            arcname="textkit-1.0",
            filter=lambda info: None if "__pycache__" in info.name else info,
        )
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    base = tmp_path_factory.mktemp("factory")
    cache = base / "cache"
    _sdist(cache)
    out = base / "bank"
    stats = build_pinned("textkit", "1.0", out, cache_dir=cache, seed=3, max_candidates=60)
    return cache, out, stats.to_json()


def test_build_keeps_mutants_that_break_tests_and_writes_no_source(built) -> None:
    cache, out, stats = built
    entries = read_manifest(out / "textkit-1.0.jsonl.gz")
    assert stats["confirmed"] == len(entries) >= 3
    assert stats["tests"] == stats["passing"] == 13
    assert stats["killed"] >= stats["kept"] >= stats["confirmed"]
    assert stats["screened"] > stats["killed"]  # some mutants survive (not every one breaks a test)
    sha = sha256_of(cache / "textkit-1.0.tar.gz")
    for entry in entries:
        assert entry["sha256"] == sha and entry["file"] == "textkit/core.py"
        # every fail-to-pass test fails with the mutant in the sandbox: the build ran them
        assert entry["f2p"] and set(entry["shown"]) <= set(entry["f2p"])
        assert not set(entry["f2p"]) & set(entry["p2p"])
        assert set(entry["f2p"]) | set(entry["p2p"]) <= set(entry["collected"])
        assert entry["level"] in (1, 2, 3, 4)
        assert entry["shown"][0] in entry["report"]
        # a manifest line carries ids and a report (tracebacks), never a copy of the sources
        assert set(entry) == KEYS and len(entry["report"]) < 4000
        assert entry["report"].count("def ") <= 2 * len(entry["shown"])
    # methods of classes are mutated too (``Class.method``), not only top-level functions
    functions = {e["mutation"][0] for e in entries}
    assert any(name.startswith("Counter.") for name in functions), functions
    assert any("." not in name for name in functions), functions
    # the project record: pinned dependencies, the sandbox's passing tests, the time limit
    record = json.loads((out / "textkit-1.0.project.json").read_text())
    assert record["requirements"] == [] and len(record["passing"]) == 13
    assert record["left_out"] == {} and record["time_limit_s"] >= 10
    # equivalent mutants are deduplicated: no two tasks of a function report the same
    # failure of the same test (the assertion's E lines tell them apart)
    signatures = [
        (e["mutation"][0], tuple(line for line in e["report"].splitlines() if line[:2] == "E "))
        + tuple(e["shown"])
        for e in entries
    ]
    assert len(set(signatures)) == len(signatures)


def test_same_pins_and_seed_give_the_same_manifest(built, tmp_path: Path) -> None:
    cache, out, _ = built
    again = tmp_path / "again"
    build_pinned("textkit", "1.0", again, cache_dir=cache, seed=3, max_candidates=60)
    for name in ("textkit-1.0.jsonl.gz", "textkit-1.0.project.json"):
        assert (again / name).read_bytes() == (out / name).read_bytes()


def test_built_tasks_grade_reference_as_success_and_noop_as_failure(
    built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, out, _ = built
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    monkeypatch.setenv("FORGEGYM_SDIST_CACHE", str(cache))
    monkeypatch.setenv("FORGEGYM_BEHAVIOUR_DIR", str(tmp_path / "behaviour"))
    bank = RealTaskBank(out, cache_dir=cache, allow_download=False)
    assert bank.projects() == {"textkit==1.0": len(bank.ids())}
    env = gym.make("Forge/Bugfix-v0", bank=str(out), max_steps=1)
    try:
        for task_id in bank.ids()[:3]:
            task = bank.get(task_id)
            ((path, content),) = task.reference.items()
            assert task.files[path] != content and path in task.editable_files
            fix = json.dumps({"action": "edit", "edits": [{"path": path, "content": content}]})
            (fixed, info), (noop, nothing) = env.unwrapped.grade_completions(
                task_id, [fix, NOOP_ACTION]
            )
            assert env.unwrapped.solved(info), info["reward_breakdown"]
            assert not env.unwrapped.solved(nothing) and noop < fixed
            # the behaviour checks were recorded from the tests and grade the task
            checks = task.hidden["behaviour"]
            assert checks["status"] == "checked" and checks["discriminating"], checks
            assert "graded by tests and behaviour" in info.terms["behaviour"].detail
            assert nothing.terms["behaviour"].value == 0.0
    finally:
        env.close()


def test_a_bank_built_with_a_cache_dir_is_served_from_it_offline(
    built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Built with --cache-dir; loaded later with no cache named and the default cache
    # empty: the bank looks where it was built instead of downloading again.
    cache, out, _ = built
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    monkeypatch.setenv("FORGEGYM_SDIST_CACHE", str(tmp_path / "empty-default"))
    bank = RealTaskBank(out, allow_download=False, behaviour=False)
    task = bank.get(bank.ids()[0])
    assert task.reference  # built, with no ColdCacheError
    # a cache named by the caller still wins (and here it is cold: a clear error)
    cold = RealTaskBank(out, cache_dir=tmp_path / "cold", allow_download=False, behaviour=False)
    with pytest.raises(ColdCacheError, match="not in the cache"):
        cold.get(cold.ids()[0])


def test_cold_cache_and_unreachable_index_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ColdCacheError, match=r"textkit==1\.0 is not in the cache"):
        fetch_sdist("textkit", "1.0", tmp_path / "empty", allow_download=False)
    entry = {"project": "textkit", "version": "1.0", "sha256": "0" * 64, "id": "x", "level": 1}
    manifest = tmp_path / "textkit-1.0.jsonl"
    manifest.write_text(json.dumps(entry) + "\n")
    record = {"requirements": [], "passing": [], "left_out": {}, "time_limit_s": 10.0}
    (tmp_path / "textkit-1.0.project.json").write_text(json.dumps(record))
    bank = RealTaskBank(manifest, cache_dir=tmp_path / "empty", allow_download=False)
    with pytest.raises(ColdCacheError, match="not in the cache"):
        bank.get("x")


def test_a_cached_file_with_another_sha256_is_refused(tmp_path: Path) -> None:
    _sdist(tmp_path)
    with pytest.raises(ValueError, match="is not the pinned"):
        fetch_sdist("textkit", "1.0", tmp_path, sha256="0" * 64, allow_download=False)


def test_a_manifest_without_its_project_record_is_a_clear_error(tmp_path: Path) -> None:
    entry = {"project": "textkit", "version": "1.0", "sha256": "0" * 64, "id": "x", "level": 1}
    (tmp_path / "textkit-1.0.jsonl").write_text(json.dumps(entry) + "\n")
    with pytest.raises(FileNotFoundError, match=r"project record of textkit==1\.0"):
        RealTaskBank(tmp_path)


def test_bank_argument_names_itself_when_wrong(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bank: expected 'real'"):
        gym.make("Forge/Bugfix-v0", bank="nowhere/at/all")
    with pytest.raises(ValueError, match="bank: manifests: no task"):
        gym.make("Forge/Bugfix-v0", bank=str(tmp_path))


class _StuckHost:
    """A screen host whose process ends on the mutant named ``stuck`` (as faulthandler's
    watchdog ends one stuck in C code)."""

    def __init__(self, stuck: str) -> None:
        self.stuck, self.calls = stuck, 0

    def screen(self, mutants: list[dict], args: object, timeout: float) -> list[dict]:
        self.calls += 1
        lines: list[dict] = []
        for mutant in mutants:
            lines.append({"started": mutant["id"]})
            if mutant["id"] == self.stuck:
                return lines
            lines.append({"id": mutant["id"], "failing": {"t": "x"}, "status": "ok"})
        return lines


def test_a_screen_process_that_dies_on_a_mutant_loses_only_that_mutant() -> None:
    from forgegym.tasklib.factory.build import _screen_all

    requests = [{"id": f"m{i}", "tests": ["t"]} for i in range(5)]
    host = _StuckHost("m2")
    said: list[str] = []
    results = _screen_all(host, requests, (), 1.0, said.append, "p")  # type: ignore[arg-type]
    assert [r["id"] for r in results] == ["m0", "m1", "m2", "m3", "m4"]
    assert [r["status"] for r in results] == ["ok", "ok", "timeout", "ok", "ok"]
    assert host.calls == 2 and "m2 ended its screen process" in said[0]


def test_training_path_works_on_a_built_bank_unchanged(
    built, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """make_dataset, make_reward_funcs and the curriculum take the bank as any other:
    the reference fix is rewarded and recorded as a success, the no-op is not."""
    from forgegym.curricula.scheduler import CurriculumScheduler
    from forgegym.integrations.trl import make_dataset, make_reward_funcs

    cache, out, _ = built
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    monkeypatch.setenv("FORGEGYM_SDIST_CACHE", str(cache))
    kwargs = {"bank": str(out)}
    bank = RealTaskBank(out)
    scheduler = CurriculumScheduler(bank, {"seed": 0})
    rows = make_dataset("Forge/Bugfix-v0", 2, seed=1, env_kwargs=kwargs)
    assert all(tid in bank.ids() for tid in rows["task_id"])
    assert "Fix the code so they pass" in rows[0]["prompt"][-1]["content"]
    task_id = rows[0]["task_id"]
    ((path, content),) = bank.get(task_id).reference.items()
    fix = json.dumps({"action": "edit", "edits": [{"path": path, "content": content}]})
    (reward,) = make_reward_funcs("Forge/Bugfix-v0", curriculum=scheduler, env_kwargs=kwargs)
    logged: dict[str, float] = {}
    values = reward(
        prompts=[[]] * 2,
        completions=[fix, NOOP_ACTION],
        task_id=[task_id, task_id],
        log_metric=lambda name, value: logged.__setitem__(name, value),
    )
    assert values[0] > 0.9 > values[1]
    assert logged["reward/success"] == 0.5
    assert scheduler._tasks[task_id].trials == 2


def _project(base: Path, name: str, files: dict[str, str]) -> Path:
    """A tiny project ``name`` 1.0 under ``base`` holding ``files`` (path -> text)."""
    root = base / f"{name}-1.0"
    for path, text in {"setup.cfg": f"[metadata]\nname = {name}\nversion = 1.0\n", **files}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_files_whose_ids_depend_on_their_neighbours_are_left_out(tmp_path: Path) -> None:
    """Grading runs several test files together and checks the ids it collects: a file
    whose parametrised ids grow with the modules imported before it, and a test that
    passes alone but not in the suite, never reach a task."""
    from forgegym.sandbox.runners import get_default_runner
    from forgegym.tasklib.factory.build import _sandbox_baseline, prepare_project

    growing = (
        "import pytest\nfrom cases import CASES\nfrom grow import double\n\n"
        "CASES.append(len(CASES))\n\n\n"
        "@pytest.mark.parametrize('x', list(CASES))\n"
        "def test_double(x):\n    assert double(x) == x + x\n"
    )
    root = _project(
        tmp_path,
        "grow",
        {
            "grow/__init__.py": "def double(x):\n    return 2 * x\n",
            "tests/cases.py": "CASES = [0]\n",
            "tests/test_a.py": growing,
            "tests/test_b.py": growing,
            "tests/test_c.py": "from cases import CASES\n\n\n"
            "def test_untouched():\n    assert CASES == [0]\n",
        },
    )
    prepared = prepare_project(root, cache_dir=tmp_path / "cache")
    passing, collected, left_out, _ = _sandbox_baseline(
        get_default_runner(), prepared, 60.0, lambda _message: None
    )
    assert set(left_out) == {"tests/test_b.py"}, left_out
    assert "change when the suite's other files are collected" in left_out["tests/test_b.py"]
    assert passing == {"tests/test_a.py::test_double[0]", "tests/test_a.py::test_double[1]"}
    assert collected == passing | {"tests/test_c.py::test_untouched"}


def test_a_mutant_leaving_a_blocked_thread_does_not_hold_the_screen(tmp_path: Path) -> None:
    """A mutant that starts a non-daemon thread waiting for ever (more-itertools had ten
    after one run) is screened and the screen process still exits by itself, instead of
    joining that thread until the build's time limit."""
    import sys

    from forgegym.tasklib.factory.build import _Runner, prepare_project

    root = _project(
        tmp_path,
        "hang",
        {
            "hang/__init__.py": "def one():\n    return 1\n",
            "tests/test_one.py": "from hang import one\n\n\ndef test_one():\n    assert one() == 1\n",
        },
    )
    leaves_thread = (
        "def one():\n    import threading\n\n"
        "    threading.Thread(target=threading.Event().wait).start()\n    return 2\n"
    )
    prepared = prepare_project(root, cache_dir=tmp_path / "cache")
    # the host's own limit is what a hung exit would run into
    host = _Runner(prepared, sys.executable, 60.0, tmp_path / "work")
    mutant = {
        "id": "m",
        "file": "hang/__init__.py",
        "function": "one",
        "source": leaves_thread,
        "tests": ["tests/test_one.py::test_one"],
    }
    text, tail = host._invoke(
        "screen",
        ["tests/test_one.py"],
        {"FORGE_FACTORY_TEST_TIMEOUT": "5"},
        {"mutants": [mutant], "first_failure": True},
    )
    assert tail.startswith("exit 0"), tail
    (_started, result) = [json.loads(line) for line in text.splitlines()]
    assert result["status"] == "ok" and list(result["failing"]) == [mutant["tests"][0]]


def test_a_build_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    """Builds sharing a folder build each project once; a build killed by its time limit
    leaves its lock behind, which must not block the project for ever."""
    import os
    import subprocess
    import sys

    from forgegym.cli.tasks import _take_lock

    lock = tmp_path / ".p-1.0.building"
    lock.write_text(str(os.getpid()))  # a live build holds it
    assert not _take_lock(lock)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    lock.write_text(gone)  # its process has ended
    assert _take_lock(lock) and lock.read_text() == str(os.getpid())


EVALKIT = {
    "evalkit/__init__.py": (
        "def _apply(op, a, b):\n"
        "    if op == '+':\n        return a + b\n"
        "    if op == '*':\n        return a * b\n"
        "    raise ValueError(op)\n\n\n"
        "class Evaluator:\n"
        "    def _eval_pair(self, text):\n"
        "        left, op, right = text.split()\n"
        "        return _apply(op, int(left), int(right))\n\n"
        "    def evaluate(self, text):\n"
        "        return self._eval_pair(text)\n"
    ),
    "tests/test_evalkit.py": (
        "import pytest\nfrom evalkit import Evaluator\n\n\n"
        "@pytest.mark.parametrize('text, value', [('1 + 2', 3), ('2 * 5', 10), ('0 + 0', 0)])\n"
        "def test_evaluate(text, value):\n    assert Evaluator().evaluate(text) == value\n\n\n"
        "def test_unknown_operator():\n"
        "    with pytest.raises(ValueError):\n        Evaluator().evaluate('1 - 2')\n"
    ),
}


@pytest.mark.parametrize("private", [True, False])
def test_private_helpers_the_tests_cover_become_targets(tmp_path: Path, private: bool) -> None:
    """An evaluator whose logic lives in ``_eval_*`` methods and a private helper: with
    private targets (the default) they are mutated; public only, just the thin method."""
    from forgegym.tasklib.factory import build_project

    root = _project(tmp_path, "evalkit", EVALKIT)
    entries, stats, record = build_project(
        root,
        project="evalkit",
        version="1.0",
        sha256="",
        seed=0,
        max_candidates=60,
        private_targets=private,
        cache_dir=tmp_path / "cache",
    )
    functions = {e["mutation"][0] for e in entries}
    assert record["options"]["private_targets"] is private
    if private:
        assert {"_apply", "Evaluator._eval_pair"} <= functions, functions
    else:
        assert functions and functions <= {"Evaluator.evaluate"}, functions


@pytest.mark.parametrize(
    ("headers", "licence"),
    [
        ("License-Expression: MIT OR Apache-2.0\nLicense: ignored\n", "MIT OR Apache-2.0"),
        ("License: BSD-3-Clause\n", "BSD-3-Clause"),
        (
            "License: UNKNOWN\nClassifier: License :: OSI Approved :: MIT License\n",
            "MIT License",
        ),
        ("Classifier: Programming Language :: Python\n", ""),
    ],
)
def test_the_record_keeps_the_licence_the_sdist_declares(
    tmp_path: Path, headers: str, licence: str
) -> None:
    from forgegym.tasklib.factory.manifest import sdist_licence

    (tmp_path / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: x\nVersion: 1\n{headers}")
    assert sdist_licence(tmp_path) == licence
    assert sdist_licence(tmp_path / "missing") == ""


FRAMEKIT = {
    # Reads a frame at import: fine for a pristine module, refused for changed code.
    "framekit/calc.py": (
        "import sys\n\nHERE = sys._getframe(0).f_globals['__name__']\n\n\n"
        "def add(a, b):\n    if a < 0:\n        return b + a\n    return a + b\n"
    ),
    "framekit/plain.py": "def mul(a, b):\n    if a < 0:\n        return -(-a * b)\n    return a * b\n",
    "framekit/__init__.py": "",
    "tests/test_framekit.py": (
        "import pytest\nfrom framekit.calc import add\nfrom framekit.plain import mul\n\n\n"
        "@pytest.mark.parametrize('a, b', [(1, 2), (-3, 4), (0, 5)])\n"
        "def test_add(a, b):\n    assert add(a, b) == a + b\n\n\n"
        "@pytest.mark.parametrize('a, b', [(1, 2), (-3, 4), (2, 5)])\n"
        "def test_mul(a, b):\n    assert mul(a, b) == a * b\n"
    ),
}


def test_a_task_whose_reference_fails_under_gradings_trust_is_dropped(tmp_path: Path) -> None:
    """Grading trusts the task's starting files, so the restored module is changed code:
    a module that reads a frame at import confirms as a mutant (itself trusted) but its
    reference crashes when graded. Such tasks are dropped and recorded, the others kept
    (croniter and pyparsing shipped tasks like these before)."""
    from forgegym.tasklib.factory import build_project

    root = _project(tmp_path, "framekit", FRAMEKIT)
    entries, stats, record = build_project(
        root,
        project="framekit",
        version="1.0",
        sha256="",
        seed=0,
        max_candidates=40,
        cache_dir=tmp_path / "cache",
    )
    files = {e["file"] for e in entries}
    assert files == {"framekit/plain.py"}, files
    refused = record["references_refused"]
    assert refused and all("framekit/calc.py::" in task_id for task_id in refused), refused
    assert stats.reference_refused == len(refused)
    assert all("crashed" in why for why in refused.values()), refused


def test_the_recorder_leaves_out_arguments_holding_their_defaults(tmp_path: Path) -> None:
    """A call that leaves an argument to its default is recorded without it, so the
    behaviour checks run the candidate's own default (a changed default shows); a
    lambda default of a project class is recorded by where it is."""
    from forgegym.envs.bugfix.behaviour import record_calls
    from forgegym.tasklib.factory.build import prepare_project

    root = _project(
        tmp_path,
        "scale",
        {
            "scale/__init__.py": "def scale(x, factor=2, *, offset=0, sign=1):\n"
            "    return sign * (x * factor + offset)\n\n\n"
            "class Box:\n    def __init__(self, key=lambda v: v):\n        self.key = key\n\n"
            "    def get(self, v):\n        return self.key(v)\n",
            "tests/test_scale.py": "from scale import Box, scale\n\n\n"
            "def test_scale():\n    assert scale(3) == 6\n"
            "    assert scale(3, offset=1) == 7\n    assert scale(3, 3, sign=-1) == -9\n\n\n"
            "def test_box():\n    assert Box().get(4) == 4\n",
        },
    )
    prepared = prepare_project(root, cache_dir=tmp_path / "cache")
    tests = ["tests/test_scale.py::test_scale", "tests/test_scale.py::test_box"]
    answer = record_calls(prepared, "scale/__init__.py", "scale", tests, ["scale"])
    assert [(c["args"], c["kwargs"]) for c in answer["calls"]] == [
        ([3], []),
        ([3], [["offset", 1]]),
        ([3, 3], [["sign", -1]]),
    ]
    answer = record_calls(prepared, "scale/__init__.py", "Box.get", tests, ["scale"])
    (call,) = answer["calls"]
    assert call["args"] == [4] and "$default" in json.dumps(call["receiver"])
