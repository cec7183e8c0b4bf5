"""Grading on a Ray cluster: :class:`RayRunner`, the runner interface over Ray actors.

Each node of the cluster gets one :class:`GradingActor` that owns a local warm
:class:`~forgegym.sandbox.runners.forkserver.ForkServerRunner` pool of that node's CPU count. A job
is shipped with its working directory (a tar of the files the trusted parent prepared),
unpacked on the actor's node into a private directory, run by the local pool under the
same isolation, and its result (decided by that node's trusted parent, exactly as
locally) comes back. So ``grade_many`` fans a GRPO group out over every core of the
cluster and the verdicts are the local pool's.

::

    ray start --head --num-cpus 8                 # on the head node
    ray start --address HEAD_IP:6379              # on each other node
    # then, in the trainer (on any node):
    env = gym.make("Forge/Bugfix-v0", runner="ray")    # RAY_ADDRESS or a local Ray

Needs the ``ray`` extra (``pip install "forgegym[ray]"``). No Ray is started unless a
:class:`RayRunner` is built: forgegym stays in-process first.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import shutil
import sys
import tarfile
import tempfile
import threading
from collections.abc import Sequence
from typing import Any

from forgegym.sandbox import isolation
from forgegym.sandbox.jobs import Job, Result
from forgegym.sandbox.runners.base import Runner
from forgegym.sandbox.runners.forkserver import ForkServerRunner

__all__ = ["GradingActor", "RayRunner", "pack_workdir", "unpack_workdir"]

#: Largest working directory shipped with one job (a task's files are kilobytes).
MAX_WORKDIR_BYTES = 64 * 1024 * 1024


def pack_workdir(workdir: str) -> bytes:
    """The regular files and directories under ``workdir`` as an uncompressed tar."""
    buffer = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for root, dirs, files in os.walk(workdir):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(root, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue  # only what the parent wrote: regular files
                total += os.path.getsize(path)
                if total > MAX_WORKDIR_BYTES:
                    raise ValueError(f"workdir {workdir!r} is over {MAX_WORKDIR_BYTES} bytes")
                tar.add(path, arcname=os.path.relpath(path, workdir), recursive=False)
    return buffer.getvalue()


def unpack_workdir(data: bytes, directory: str) -> None:
    """Extract a :func:`pack_workdir` archive into ``directory`` (regular files only)."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        members = []
        for member in tar.getmembers():
            name = os.path.normpath(member.name)
            if not member.isfile() or name.startswith("..") or os.path.isabs(name):
                raise ValueError(f"refusing archive member {member.name!r}")
            members.append(member)
        if sys.version_info >= (3, 12) or hasattr(tarfile, "data_filter"):
            tar.extractall(directory, members=members, filter="data")
        else:  # pragma: no cover - Python without extraction filters
            tar.extractall(directory, members=members)  # noqa: S202 - members checked above


class GradingActor:
    """Runs jobs on one node with a local fork-server pool (a Ray actor; see module doc)."""

    def __init__(self, workers: int, max_procs: int = isolation.DEFAULT_MAX_PROCS) -> None:
        self.runner = ForkServerRunner(workers=workers, max_procs=max_procs)
        self.runner.warm()
        self.jobs_run = 0

    def node(self) -> dict[str, Any]:
        import ray

        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "pid": os.getpid(),
            "workers": self.runner.workers,
            "jobs_run": self.jobs_run,
        }

    def run(self, job: Job, archive: bytes) -> Result:
        from forgegym.sandbox.workspace import scratch_root

        directory = tempfile.mkdtemp(prefix="fg-ray-", dir=scratch_root())
        self.jobs_run += 1
        try:
            unpack_workdir(archive, directory)
            return self.runner.run(job.model_copy(update={"workdir": directory}))
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def close(self) -> bool:
        self.runner.close()
        return True


class RayRunner(Runner):
    """The runner interface over a Ray cluster: one :class:`GradingActor` per node.

    Args:
        address: Ray address to connect to (default: an already initialised Ray, else
            ``RAY_ADDRESS``, else a new local Ray).
        workers_per_node: pool size of each node's actor (default: the node's CPUs).
        init_kwargs: extra ``ray.init`` arguments when this runner starts Ray.
        max_procs: process limit of each sandboxed job.
        max_restarts: how many times Ray restarts a node's actor that died (its process
            killed, OOM-killed, crashed) on the same node; its in-flight jobs are retried
            once on the restarted actor. Bounded, so an actor that keeps dying ends in
            machine faults (``setup: ... actor is dead``) instead of a restart loop.

    ``run_many`` sends the jobs to the actors round-robin, weighted by their pool
    sizes, and returns the results in input order. Thread-safe.
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        workers_per_node: int | None = None,
        init_kwargs: dict[str, Any] | None = None,
        max_procs: int = isolation.DEFAULT_MAX_PROCS,
        max_restarts: int = 4,
    ) -> None:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        if workers_per_node is not None and workers_per_node < 1:
            raise ValueError(f"workers_per_node must be >= 1, got {workers_per_node!r}")
        self._started_ray = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            kwargs.update(init_kwargs or {})
            ray.init(address=address or os.environ.get("RAY_ADDRESS"), **kwargs)
            self._started_ray = True
        nodes = [
            n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1
        ]
        if not nodes:
            raise RuntimeError("the Ray cluster has no live node with a CPU")
        remote_actor = ray.remote(GradingActor)
        self._actors: list[Any] = []
        sizes: list[int] = []
        for node in nodes:
            workers = workers_per_node or max(1, int(node["Resources"]["CPU"]))
            actor = remote_actor.options(
                num_cpus=0,  # the pool's jobs are what uses the node's CPUs
                max_concurrency=workers + 2,
                # A lost actor is replaced by Ray (its __init__ runs again: a fresh warm
                # pool) and the jobs it was running are resubmitted once: a job cannot
                # reach the actor from its sandbox, so its death is never the job's.
                max_restarts=max_restarts,
                max_task_retries=1,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
            ).remote(workers, max_procs)
            self._actors.append(actor)
            sizes.append(workers)
        self.nodes = ray.get([a.node.remote() for a in self._actors])
        super().__init__(workers=sum(sizes), max_procs=max_procs)
        # Each actor's local pool judges its own node's load (Runner.run there); the
        # driver's host says nothing about it.
        self.overload = None
        # Round-robin over pool slots, so a node with twice the workers gets twice the jobs.
        slots = [i for i, size in enumerate(sizes) for _ in range(size)]
        order = [slots[j] for j in _interleave(sizes)]
        self._next = itertools.cycle(order or slots)
        self._next_lock = threading.Lock()

    def _actor(self) -> Any:
        with self._next_lock:
            return self._actors[next(self._next)]

    def _submit(self, job: Job) -> Any:
        return self._actor().run.remote(job, pack_workdir(job.workdir))

    def _run(self, job: Job) -> Result:
        import ray

        return ray.get(self._submit(job))  # type: ignore[no-any-return]

    def run_many(self, jobs: Sequence[Job]) -> list[Result]:
        """Run jobs over every node's pool at once; results in input order."""
        import ray

        if self._closed:
            raise RuntimeError("ray runner is closed")
        refs: list[Any] = []
        early: dict[int, Result] = {}
        for index, job in enumerate(jobs):
            if not os.path.isdir(job.workdir):
                early[index] = self.run(job)  # the interface's INTERNAL_ERROR result
                refs.append(None)
            else:
                refs.append(self._submit(job))
        results: list[Result] = []
        for index, ref in enumerate(refs):
            if ref is None:
                results.append(early[index])
                continue
            try:
                results.append(ray.get(ref))
            except Exception:  # noqa: BLE001 - a lost worker or node: not the job's doing
                # One job's lost actor must not fail the batch: run it again through
                # run() (the next actor; retried once more, then a machine fault).
                results.append(self.run(jobs[index]))
        return results

    def close(self) -> None:
        if self._closed:
            return
        import ray

        with contextlib.suppress(Exception):
            ray.get([a.close.remote() for a in self._actors], timeout=60)
        for actor in self._actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        self._actors.clear()
        if self._started_ray:
            with contextlib.suppress(Exception):
                ray.shutdown()
        super().close()


def _interleave(sizes: Sequence[int]) -> list[int]:
    """Slot indices ordered so consecutive jobs go to different nodes."""
    offsets = list(itertools.accumulate([0, *sizes]))
    order = []
    for k in range(max(sizes, default=0)):
        for node, size in enumerate(sizes):
            if k < size:
                order.append(offsets[node] + k)
    return order
