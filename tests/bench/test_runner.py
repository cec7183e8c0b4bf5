"""``forgegym bench``'s runner table: the ratios come with the load they were measured at."""

from __future__ import annotations

import pytest

from forgegym.bench.runner import RunnerBench, print_runner_bench


def _bench(load: float) -> RunnerBench:
    return RunnerBench(
        runs=3,
        tests_per_run=7,
        workers=2,
        pool_median_s=0.02,
        baseline_median_s=0.17,
        ratio=8.5,
        verdicts_identical=True,
        many_jobs=16,
        sequential_s=1.1,
        run_many_s=1.0,
        run_many_speedup=1.1,
        confined=True,
        load_start=load,
        load_end=load,
        cores=2,
    )


@pytest.mark.parametrize("load", [0.2, 9.0])
def test_ratios_print_the_load_and_what_to_expect(
    load: float, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    print_runner_bench(_bench(load))
    out = " ".join(capsys.readouterr().out.split())
    where = f"load average {load:.1f} -> {load:.1f} on 2 cores"
    assert f"8.5x ({where})" in out and f"1.10x ({where})" in out
    assert "about 14x and 1.7x on an idle" in out and "under load both ratios shrink" in out
    assert ("This run was under load" in out) == (load >= 1.0)


def test_a_real_run_records_the_load() -> None:
    from forgegym.bench.runner import run_runner_bench

    bench = run_runner_bench(runs=1, many=2, workers=1, unconfined=False)
    assert bench.load_start is not None and bench.load_end is not None and bench.cores >= 1
