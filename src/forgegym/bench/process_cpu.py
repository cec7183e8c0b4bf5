"""CPU accounting of this process's tree for the throughput bench: the live descendants' CPU
from ``/proc`` (:func:`tree_cpu`), the grading processes among them
(:func:`grading_pids`) and this process's own ``getrusage`` (:func:`rusage_s`)."""

from __future__ import annotations

import os

__all__ = ["grading_pids", "rusage_s", "tree_cpu", "tree_cpu_s"]


def tree_cpu(grading: frozenset[int] = frozenset()) -> tuple[float, float, float]:
    """CPU seconds of every live process under this one, in three parts: the own CPU of
    the ``grading`` processes (direct children), the CPU of the children they reaped
    (ruff), and everything else (own + reaped children: sandbox pools, zygotes, jobs)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    cpu: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        # fields[0] is the state (field 3); ppid is field 4, utime..cstime 14..17.
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]))
    me = os.getpid()
    own = reaped = rest = 0
    for pid, (self_ticks, child_ticks) in cpu.items():
        if pid in grading and parents.get(pid) == me:
            own += self_ticks
            reaped += child_ticks
            continue
        seen = pid
        for _ in range(64):
            seen = parents.get(seen, 0)
            if seen == me:
                rest += self_ticks + child_ticks
                break
            if seen <= 1:
                break
    return own / tick, reaped / tick, rest / tick


def tree_cpu_s() -> float:
    """CPU seconds (own + reaped children) of every live process under this one."""
    return sum(tree_cpu())


def grading_pids() -> frozenset[int]:
    """This process's grading processes (``make_reward_funcs(grading_processes=N)``'s
    spawned workers, :mod:`forgegym.integrations.sharded`): direct children started by
    ``multiprocessing.spawn`` (not its resource tracker, not a sandbox pool)."""
    me = os.getpid()
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            if ppid != me:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except (OSError, ValueError, IndexError):
            continue
        if b"multiprocessing.spawn" in cmdline:
            out.add(int(entry))
    return frozenset(out)


def rusage_s(who: int) -> float:
    import resource

    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime
