"""Cost of the child's integrity layer: ``python benchmarks/integrity.py [--runs 30]``.

Runs the same 7-test file on the fork-server pool with the runtime policy (audit hooks,
signal-handler filter) on and off, interleaved, and once per run on the plain-subprocess
baseline; the authenticated report channel is always on (it is the protocol). Prints the
median wall time of each and the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from forgegym.sandbox.jobs import PytestJob, RunStatus
from forgegym.sandbox.runners import ForkServerRunner, SubprocessRunner

SEVEN = "\n".join(f"def test_{i}():\n    assert sum(range({i} + 3)) >= {i}\n" for i in range(7))


def _time(runner: ForkServerRunner | SubprocessRunner, job: PytestJob) -> float:
    start = time.perf_counter()
    result = runner.run(job)
    elapsed = time.perf_counter() - start
    if result.status is not RunStatus.COMPLETED or not result.all_passed:
        raise RuntimeError(f"benchmark run failed: {result.status.value} {result.detail}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="forgegym-bench-") as tmp:
        (Path(tmp) / "test_seven.py").write_text(SEVEN)
        on = PytestJob(workdir=tmp, targets=["test_seven.py"])
        off = on.model_copy(update={"runtime_policy": False})
        with ForkServerRunner(workers=1) as pool:
            for _ in range(3):  # warm up
                _time(pool, on)
                _time(pool, off)
            with_policy, without = [], []
            for _ in range(args.runs):
                with_policy.append(_time(pool, on))
                without.append(_time(pool, off))
        with SubprocessRunner(workers=1) as baseline:
            cold = [_time(baseline, on) for _ in range(max(3, args.runs // 5))]
    a, b, c = (statistics.median(x) * 1000 for x in (with_policy, without, cold))
    print(f"fork server, policy on : {a:7.1f} ms/run (median of {args.runs})")
    print(f"fork server, policy off: {b:7.1f} ms/run")
    print(f"policy cost            : {a - b:+7.1f} ms/run ({(a / b - 1) * 100:+.0f}%)")
    print(f"subprocess baseline    : {c:7.1f} ms/run -> pool {c / a:.1f}x faster")


if __name__ == "__main__":
    main()
