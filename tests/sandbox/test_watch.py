"""The trusted per-test watch (``PytestJob.watch``): retries, lines run, swallowed
exceptions, chaos seams, the private RNG and the watch's own integrity."""

from __future__ import annotations

import random
from pathlib import Path

from forgegym.sandbox.jobs import PytestJob, RunStatus, SetupHook
from forgegym.sandbox.runners import Runner

from .conftest import make_ws

SOURCE = "import random\n\n\ndef draw():\n    return random.random()\n"
HOOK = "forgegym.envs.flaky.chaos:apply_chaos"


def _run(runner: Runner, tmp_path: Path, test: str, **hook: object) -> dict:
    ws = make_ws(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": SOURCE, "tests/test_w.py": test})
    job = PytestJob(
        workdir=str(ws),
        targets=["tests/test_w.py"],
        watch=True,
        timeout_s=60,
        setup_hooks=[SetupHook(target=HOOK, kwargs={"seed": 7, "private_rng": True, **hook})],
    )
    (result,) = runner.run_many([job])
    assert result.status is RunStatus.COMPLETED, (result.detail, result.stderr_tail)
    return {r.nodeid.split("::")[1]: r for r in result.records}


def test_entries_lines_and_handled_exceptions(runner: Runner, tmp_path: Path) -> None:
    test = (
        "from pkg import mod\n"  # 1
        "\n"
        "def test_plain():\n"  # 3
        "    assert 0 <= mod.draw() < 1\n"  # 4
        "\n"
        "def test_recursion(_n=0):\n"  # 6
        "    try:\n"  # 7
        "        assert _n >= 2\n"  # 8
        "    except AssertionError:\n"  # 9
        "        return test_recursion(_n + 1)\n"  # 10
        "\n"
        "def test_early():\n"  # 12
        "    if mod:\n"  # 13
        "        return\n"  # 14
        "    assert mod.draw() == 2\n"  # 15
    )
    records = _run(runner, tmp_path, test)
    plain, retry, early = (records[k].watch for k in ("test_plain", "test_recursion", "test_early"))
    assert plain is not None and plain.entries == 1 and plain.lines == [4] and not plain.handled
    assert retry is not None and retry.entries == 3
    assert retry.handled == [("AssertionError", 8, 9)] * 2  # resumed at the except
    assert early is not None and 15 not in early.lines and early.tamper is None


def test_a_seam_changed_at_import_by_computed_names_is_caught_and_undone(
    runner: Runner, tmp_path: Path
) -> None:
    test = (
        "import importlib\n"
        "setattr(importlib.import_module('ran' + 'dom'), 'ran' + 'dom', lambda: 0.5)\n"
        "from pkg import mod\n\n"
        "def test_calm():\n"
        "    assert mod.draw() != 0.5\n"  # re-armed before the call: the real RNG again
    )
    record = _run(runner, tmp_path, test)["test_calm"]
    assert record.outcome.value == "passed"
    assert record.watch is not None and record.watch.tamper == "random.random was rebound"


def test_seams_patched_during_the_call_and_restored_are_caught(
    runner: Runner, tmp_path: Path
) -> None:
    test = (
        "import os, time\nfrom pkg import mod, helper\n\n"
        "def test_env():\n"
        "    old = os.environ['T' + 'Z']\n"
        "    os.environ['T' + 'Z'] = 'UTC0'\n"
        "    helper.touch()\n"
        "    os.environ['T' + 'Z'] = old\n"
    )
    ws_files = {"pkg/helper.py": "def touch():\n    return 1\n"}
    ws = make_ws(tmp_path, ws_files)
    assert ws.exists()
    record = _run(runner, tmp_path, test, tz="JST-9")["test_env"]
    assert record.watch is not None and record.watch.tamper == "environment variable TZ was changed"


def test_private_rng_draws_like_the_seeded_global_and_ignores_reseeding(
    runner: Runner, tmp_path: Path
) -> None:
    expected = random.Random(7)
    values = [expected.random(), expected.randint(0, 9), expected.choice("abcdef")]
    test = (
        "import random\nfrom pkg import mod\n\n"
        "def test_draws():\n"
        f"    assert [mod.draw(), random.randint(0, 9), random.choice('abcdef')] == {values!r}\n"
        "\n"
        "def test_reseed_is_a_decoy():\n"
        "    getattr(random, 'se' + 'ed')(0)\n"
        "    random.Random.seed(random._inst, 0)\n"
        "    random.setstate(random.Random(0).getstate())\n"
        "    assert mod.draw() != random.Random(0).random()\n"
    )
    records = _run(runner, tmp_path, test)
    assert records["test_draws"].outcome.value == "passed", records["test_draws"].message
    assert records["test_reseed_is_a_decoy"].outcome.value == "passed"
    assert records["test_reseed_is_a_decoy"].watch.tamper is None  # type: ignore[union-attr]


def test_the_watch_cannot_be_removed_or_read_by_the_test(runner: Runner, tmp_path: Path) -> None:
    for body in (
        "    import sys\n    sys.settrace(None)\n",
        "    import sys\n"
        "    cells = [c.cell_contents for c in sys.gettrace().__closure__]\n"
        "    send = [c for c in cells if getattr(c, '__name__', '') == 'send'][0]\n"
        "    send(('take', 'tests/test_w.py::test_x'))\n",
    ):
        ws = make_ws(tmp_path / str(len(body)), {"tests/test_w.py": f"def test_x():\n{body}"})
        job = PytestJob(workdir=str(ws), targets=["tests/test_w.py"], watch=True, timeout_s=60)
        (result,) = runner.run_many([job])
        assert not result.all_passed
        assert result.status is not RunStatus.COMPLETED, body
