"""``forgegym bench --throughput``: what its figures mean, not how fast anything is."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from forgegym.bench.process_cpu import grading_pids, tree_cpu, tree_cpu_s
from forgegym.bench.throughput import (
    GRPO_STEP,
    ThroughputResult,
    ThroughputRow,
    bench_throughput,
    plain_sample,
)


def _row(workers: int, optimised: bool, wall: float, **cpu: float) -> ThroughputRow:
    return ThroughputRow(
        env_id="Forge/Bugfix-v0",
        workers=workers,
        optimised=optimised,
        completions=10,
        wall_s=wall,
        rewards=[1.0] * 10,
        wins=[5, 5],
        **cpu,
    )


def test_cpu_efficiency_is_amdahl_over_the_parents_serial_cpu() -> None:
    # 1 s of parent CPU (serial) and 3 s of sandbox CPU (parallel) for 10 completions:
    # on 2 cores at best (1 + 3) / (2 * 1 + 3) = 80%; on 16 cores 4 / 19.
    rows = [
        _row(1, True, 4.0, parent_cpu_s=1.0, pool_cpu_s=2.5, children_cpu_s=0.5),
        _row(2, True, 2.5, parent_cpu_s=1.0, pool_cpu_s=2.5, children_cpu_s=0.5),
        _row(1, False, 16.0, parent_cpu_s=4.0, pool_cpu_s=12.0),
        _row(2, False, 8.0, parent_cpu_s=4.0, pool_cpu_s=12.0),
    ]
    result = ThroughputResult(rows, 2, 2, 5, "issue", (0, 0, 0), (0, 0, 0))
    assert rows[1].amdahl(2) == pytest.approx(0.8)
    (summary,) = result.summary()
    assert summary.cpu_efficiency == pytest.approx(0.8)
    assert summary.cpu_efficiency_projected == pytest.approx(4 / 19)
    assert summary.wall_efficiency == pytest.approx((10 / 2.5) / (10 / 4.0) / 2)
    assert summary.cpu_ms == pytest.approx(400.0) and summary.reference_cpu_ms == 1600.0
    assert summary.cpu_ratio == pytest.approx(4.0)
    assert summary.parent_ms == pytest.approx(100.0)
    assert summary.max_reward_diff == 0.0 and summary.solved_agree
    rows[3].rewards = [0.9] * 10
    rows[3].wins = [4, 5]
    (summary,) = result.summary()
    assert summary.max_reward_diff == pytest.approx(0.1) and not summary.solved_agree


def test_plain_sample_keeps_each_groups_fix_and_no_op() -> None:
    ids = [t for t in ("a", "b") for _ in range(8)]
    texts = [f"{t}-{'fix' if i < 4 else 'noop'}{i}" for t in ("a", "b") for i in range(8)]
    assert plain_sample((ids, texts), 8, 2) == (
        ["a", "a", "b", "b"],
        ["a-fix0", "a-noop4", "b-fix0", "b-noop4"],
    )
    assert plain_sample((ids, texts), 8, None) == (ids, texts)
    assert plain_sample((ids, texts), 8, 8) == (ids, texts)
    assert len(plain_sample((ids, texts), 8, 3)[0]) == 6


def test_grpo_step_wall_is_measured_on_a_grpo_batch_and_scaled_otherwise() -> None:
    full = _row(1, True, 100.0)
    full.completions, full.rewards = GRPO_STEP, []
    plain = _row(1, False, 40.0, parent_cpu_s=1.0, children_cpu_s=39.0)
    plain.kind, plain.sample_of, plain.completions = "plain", GRPO_STEP, 128
    result = ThroughputResult([plain, full], 2, 64, 8, "issue", (0, 0, 0), (0, 0, 0))
    lines = {line.kind: line for line in result.baseline("Forge/Bugfix-v0")}
    assert lines["warm"].grpo_measured and lines["warm"].grpo_wall_s == 100.0
    assert not lines["plain"].grpo_measured and lines["plain"].sample_of == GRPO_STEP
    assert lines["plain"].grpo_wall_s == pytest.approx(40.0 * GRPO_STEP / 128)
    assert result.baseline_table().row_count == 2


def test_tree_cpu_counts_the_cpu_of_descendants() -> None:
    before = tree_cpu_s()
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
            "import sys; sys.stdout.write('done\\n'); sys.stdout.flush(); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "done\n"
        time.sleep(0.05)
        assert tree_cpu_s() - before >= 0.25
    finally:
        child.kill()
        child.wait()
    assert os.getpid() > 0


def _spin(seconds: float, ready: Any) -> None:
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    ready.set()
    time.sleep(30)


def test_tree_cpu_counts_a_grading_process_apart_from_the_rest() -> None:
    """A spawned grading process's own CPU is its own part, not the sandbox pool's (the
    bench compares it with the parent's CPU of one-process rows)."""
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    before_pids = grading_pids()
    rest0 = tree_cpu()[2]
    child = context.Process(target=_spin, args=(0.3, ready), daemon=True)
    child.start()
    try:
        # The spawned child's command line is the interpreter's only once it has exec'd:
        # under load that takes a moment after start() returns.
        deadline = time.monotonic() + 30
        grading = grading_pids() - before_pids
        while not grading and time.monotonic() < deadline:
            time.sleep(0.05)
            grading = grading_pids() - before_pids
        assert grading == {child.pid}
        assert ready.wait(timeout=60)
        time.sleep(0.05)
        own, _, rest = tree_cpu(grading)
        assert own >= 0.25
        assert rest - rest0 < 0.25  # not counted twice
        assert tree_cpu()[2] - rest0 >= 0.25  # not named as grading: the rest's
    finally:
        child.kill()
        child.join()


def test_bench_measures_a_family_in_fresh_processes_on_both_pool_sizes() -> None:
    result = bench_throughput(
        ["Forge/Oversight-v0"],
        tasks=1,
        group=4,
        workers=[1, 2],
        reference=False,
        sharded=False,
        show=False,
    )
    assert [(r.workers, r.optimised, r.completions) for r in result.rows] == [
        (1, True, 4),
        (2, True, 4),
    ]
    for row in result.rows:
        assert row.wall_s > 0 and row.parent_cpu_s > 0
        assert row.pool_cpu_s >= 0 and row.children_cpu_s >= 0
        assert len(row.rewards) == 4 and sum(row.wins) >= 1  # the reference fixes solve
    (summary,) = result.summary()
    assert summary.max_reward_diff == 0.0 and summary.solved_agree
    assert summary.cpu_efficiency is not None and 0.0 < summary.cpu_efficiency <= 1.0


def test_each_row_is_printed_as_it_finishes(capsys: pytest.CaptureFixture[str]) -> None:
    """A long bench stopped midway keeps the rows it measured: each is printed to stderr
    when it finishes, before the final table."""
    result = bench_throughput(
        ["Forge/Oversight-v0"], tasks=1, group=2, workers=[1], reference=False, sharded=False
    )
    err = capsys.readouterr().err.splitlines()
    assert len(err) == len(result.rows) == 1
    assert "Forge/Oversight-v0 warm: 1 worker(s), 1 process(es), 2 completions in" in err[0]
    assert f"{result.rows[0].per_s:.2f}/s" in err[0]


def test_a_plain_rows_line_names_its_sample() -> None:
    row = _row(2, False, 4.0, parent_cpu_s=1.0, pool_cpu_s=1.0)
    row.kind, row.sample_of = "plain", 80
    line = row.line()
    assert line.startswith("Forge/Bugfix-v0 plain: 2 worker(s)")
    assert "10 completions (sample of 80) in 4.0 s = 2.50/s, CPU 200 ms/completion" in line
