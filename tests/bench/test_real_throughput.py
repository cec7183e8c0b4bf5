"""``forgegym bench --throughput --env-kwarg bank=...`` and ``--reset`` on real tasks: the
plain-pytest baseline, cold and warm rows on one batch, with the same rewards (a bank
built offline from the vendored textkit project)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgegym.bench.reset import bench_first_reset
from forgegym.bench.throughput import GRPO_STEP, bench_throughput
from tests.fixtures.textkit_bank import build_textkit_bank

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("benchbank")
    return build_textkit_bank(base)


@pytest.fixture
def bank(built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    cache, out = built
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    monkeypatch.setenv("FORGEGYM_SDIST_CACHE", str(cache))
    return str(out)


def test_real_rows_against_the_plain_baseline(bank: str) -> None:
    result = bench_throughput(
        ["Forge/Bugfix-v0"],
        tasks=1,
        group=4,
        workers=[1],
        reference=False,
        sharded=False,
        fresh_process=False,
        show=False,
        env_kwargs={"bank": bank},
    )
    kinds = {row.kind: row for row in result.rows}
    assert set(kinds) == {"plain", "cold", "warm"}
    plain, cold, warm = kinds["plain"], kinds["cold"], kinds["warm"]
    # the baseline runs pytest once per completion; forgegym once per distinct patch
    assert plain.runs == plain.completions == 4
    assert warm.runs == cold.runs == 2  # two fixes share a run, two no-ops another
    assert warm.rewards == cold.rewards and warm.wins == cold.wins == [2]
    assert warm.tests_s > 0 and plain.phases_s["pytest"] > 0 and plain.children_cpu_s > 0
    assert "materialise" in cold.phases_s and "materialise" not in warm.phases_s
    lines = {line.kind: line for line in result.baseline("Forge/Bugfix-v0")}
    assert lines["plain"].cpu_ratio == pytest.approx(1.0)
    step = lines["warm"].grpo_step_s
    assert step == pytest.approx(GRPO_STEP * lines["warm"].cpu_ms / 1000.0 / result.cores)
    assert any(r.kind == "plain" for r in result.rows) and result.baseline_table().row_count == 3


def test_first_reset_bench_times_cached_and_cold_resets(bank: str) -> None:
    bench = bench_first_reset(env_kwargs={"bank": bank}, tasks=2, cold=1, show=False)
    assert len(bench.cached_s) == len(bench.make_s) == 2 and len(bench.cold_s) == 1
    assert len(bench.cached_cpu_s) == len(bench.make_cpu_s) == 2 and len(bench.cold_cpu_s) == 1
    assert all(s > 0 for s in [*bench.cached_s, *bench.cold_s, *bench.cold_cpu_s])
    assert bench.table().row_count == 6
