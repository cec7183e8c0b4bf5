"""The first ``reset`` of a task in a new process: ``forgegym bench --reset``.

For a real bank the first reset of a task builds it: the project's unpacked tree, its
dependency environment, its files read, the imports of its tests, its tests' warm code
(:mod:`forgegym.envs.bugfix.real`). Each measurement runs in a fresh interpreter that
makes the env (timed apart) and resets it once on the task:

* **cached**: the project was materialised before (this command builds every measured
  task once in its own process first), so the reset reads what earlier processes left
  on disk;
* **cold**: a fresh ``FORGEGYM_REAL_DIR`` (nothing unpacked, no test imports, no warm
  code); the sdists and the dependency environments stay cached (downloads and installs
  are the build's, once per machine).

Figures are wall-clock seconds on a possibly shared machine (the load average comes with
them); tests never assert them.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

__all__ = ["ResetBench", "bench_first_reset"]

_CHILD = """
import json, resource, sys, time
def cpu():  # this process and the children it reaped (a sandbox run, a host check)
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
request = json.loads(sys.stdin.read())
t0, c0 = time.perf_counter(), cpu()
import gymnasium as gym
import forgegym
env = gym.make(request["env_id"], **request["env_kwargs"])
t1, c1 = time.perf_counter(), cpu()
env.reset(seed=0, options={"task_id": request["task_id"]})
t2, c2 = time.perf_counter(), cpu()
env.close()
times = {"make_s": t1 - t0, "reset_s": t2 - t1, "make_cpu_s": c1 - c0, "reset_cpu_s": c2 - c1}
print("RESET " + json.dumps(times), flush=True)
"""


@dataclass
class ResetBench:
    """Seconds per first reset, cached and cold, with the machine's load."""

    env_id: str
    env_kwargs: dict[str, Any]
    cached_s: list[float] = field(default_factory=list)
    cold_s: list[float] = field(default_factory=list)
    make_s: list[float] = field(default_factory=list)
    #: CPU seconds (the process and its reaped children): robust to other load, where
    #: wall-clock on a shared machine is mostly the scheduler's
    cached_cpu_s: list[float] = field(default_factory=list)
    cold_cpu_s: list[float] = field(default_factory=list)
    make_cpu_s: list[float] = field(default_factory=list)
    task_ids: list[str] = field(default_factory=list)
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @staticmethod
    def _stats(values: list[float]) -> dict[str, float]:
        if not values:
            return {}
        ordered = sorted(values)
        return {
            "n": len(ordered),
            "median": statistics.median(ordered),
            "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))],
            "max": ordered[-1],
        }

    def table(self) -> Table:
        table = Table(
            title=f"First reset in a new process, {self.env_id} {self.env_kwargs}: load "
            f"average {self.load_before[0]:.1f} -> {self.load_after[0]:.1f}"
        )
        for name in ("", "tasks", "median s", "p90 s", "max s"):
            table.add_column(name, justify="left" if not name else "right")
        for name, values in (
            ("cached reset", self.cached_s),
            ("cold reset", self.cold_s),
            ("gym.make", self.make_s),
            ("cached reset, CPU", self.cached_cpu_s),
            ("cold reset, CPU", self.cold_cpu_s),
            ("gym.make, CPU", self.make_cpu_s),
        ):
            stats = self._stats(values)
            if stats:
                table.add_row(
                    name,
                    str(int(stats["n"])),
                    f"{stats['median']:.2f}",
                    f"{stats['p90']:.2f}",
                    f"{stats['max']:.2f}",
                )
        table.caption = (
            "cached: the project unpacked and its caches written by an earlier process; "
            "cold: nothing unpacked (sdists and dependency environments cached). "
            "gym.make: interpreter start to a made env (imports included), apart. "
            "Wall seconds, then CPU seconds (the process and the children it reaped)."
        )
        return table


def _one(env_id: str, env_kwargs: dict[str, Any], task_id: str, real_dir: str | None) -> Any:
    environ = dict(os.environ)
    if real_dir is not None:
        environ["FORGEGYM_REAL_DIR"] = real_dir
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=json.dumps({"env_id": env_id, "env_kwargs": env_kwargs, "task_id": task_id}),
        capture_output=True,
        text=True,
        timeout=1800,
        env=environ,
        check=False,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESET ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"reset of {task_id} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}"
        )
    return json.loads(lines[-1][len("RESET ") :])


def bench_first_reset(
    env_id: str = "Forge/Bugfix-v0",
    env_kwargs: dict[str, Any] | None = None,
    *,
    tasks: int = 50,
    cold: int = 10,
    seed: int = 0,
    show: bool = True,
) -> ResetBench:
    """Time the first reset of ``tasks`` random tasks, each in a fresh process, after
    building them once here (cached), and of ``cold`` of them with nothing unpacked."""
    import gymnasium as gym

    import forgegym  # noqa: F401  (registers the ids)

    kwargs = dict(env_kwargs if env_kwargs is not None else {"bank": "real"})
    for name, value in (("tasks", tasks), ("cold", cold)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an int >= 0, got {value!r}")
    env = gym.make(env_id, **kwargs)
    try:
        inner: Any = env.unwrapped
        ids = inner.task_bank.task_ids(tasks, seed=seed)
        for task_id in ids:  # cached from here on (downloads, unpacking, caches)
            inner.get_task(task_id)
    finally:
        env.close()
    bench = ResetBench(env_id, kwargs, task_ids=ids, load_before=os.getloadavg())
    for task_id in ids:
        got = _one(env_id, kwargs, task_id, None)
        bench.cached_s.append(got["reset_s"])
        bench.make_s.append(got["make_s"])
        bench.cached_cpu_s.append(got["reset_cpu_s"])
        bench.make_cpu_s.append(got["make_cpu_s"])
    for task_id in ids[:cold]:
        scratch = tempfile.mkdtemp(prefix="forgegym-cold-reset-")
        try:
            got = _one(env_id, kwargs, task_id, scratch)
            bench.cold_s.append(got["reset_s"])
            bench.cold_cpu_s.append(got["reset_cpu_s"])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    bench.load_after = os.getloadavg()
    if show:
        from rich.console import Console

        Console().print(bench.table())
    return bench
