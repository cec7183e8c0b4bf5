"""A reduced run of benchmarks/curriculum.py: ours beats the fixed band and uniform."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).parents[2] / "benchmarks" / "curriculum.py"


def _load():
    spec = importlib.util.spec_from_file_location("forgegym_bench_curriculum", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_curriculum_benchmark_targets() -> None:
    bench = _load()
    results = bench.run_curriculum_bench(seeds=4, strategies=("uniform", "fixed_band", "ours"))
    ours = results["ours"]["median"]
    assert results["ours"]["reached"] == 4
    assert ours <= 0.75 * results["fixed_band"]["median"]  # >= 25% fewer rollouts
    assert 2 * ours <= results["uniform"]["median"]  # >= 2x fewer
