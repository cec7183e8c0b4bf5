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
import logging
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

#: How long to wait for a failed actor to answer (a restarting one warms its pool first).
ACTOR_PROBE_TIMEOUT_S = 60.0

logger = logging.getLogger(__name__)


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

    An actor that is dead for good (its restarts used up, its node gone) leaves the
    rotation: its jobs are retried on the other nodes' actors. With none left, jobs are
    machine faults.

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
        self._sizes = sizes
        self._dead: set[int] = set()
        self._next_lock = threading.Lock()
        self._rotate()

    def _rotate(self) -> None:
        """Round-robin over the live actors' pool slots, so a node with twice the workers
        gets twice the jobs. Call with ``_next_lock`` held (or from ``__init__``)."""
        sizes = [0 if i in self._dead else size for i, size in enumerate(self._sizes)]
        slots = [i for i, size in enumerate(sizes) for _ in range(size)]
        self._next = itertools.cycle([slots[j] for j in _interleave(sizes)])
        self.workers = max(1, sum(sizes))

    def _actor(self) -> tuple[int, Any]:
        with self._next_lock:
            if len(self._dead) == len(self._actors):
                raise RuntimeError("every node's grading actor is dead (restarts used up)")
            index = next(self._next)
            return index, self._actors[index]

    def _submit(self, job: Job) -> tuple[int, Any]:
        index, actor = self._actor()
        return index, actor.run.remote(job, pack_workdir(job.workdir))

    def _lost(self, index: int) -> None:
        """A job's actor failed: drop it from the rotation if it is dead for good. One that
        Ray is restarting answers once restarted and stays."""
        import ray
        from ray.exceptions import ActorUnavailableError, ActorUnschedulableError, RayActorError

        try:
            ray.get(self._actors[index].node.remote(), timeout=ACTOR_PROBE_TIMEOUT_S)
            return
        except ActorUnavailableError:
            return  # temporarily unreachable: may come back
        except (RayActorError, ActorUnschedulableError):
            pass
        except Exception:  # noqa: BLE001 - unknown (e.g. still restarting): keep it
            return
        with self._next_lock:
            if index in self._dead:
                return
            self._dead.add(index)
            self._rotate()
        logger.warning("grading actor %d is dead for good; %d left", index, self.live_actors)

    @property
    def live_actors(self) -> int:
        """Actors still in the rotation."""
        return len(self._actors) - len(self._dead)

    def _run(self, job: Job) -> Result:
        import ray

        index, ref = self._submit(job)
        try:
            return ray.get(ref)  # type: ignore[no-any-return]
        except Exception:
            self._lost(index)
            raise  # Runner.run: a setup fault, retried once on the next live actor

    def run_many(self, jobs: Sequence[Job]) -> list[Result]:
        """Run jobs over every node's pool at once; results in input order."""
        import ray

        if self._closed:
            raise RuntimeError("ray runner is closed")
        refs: list[tuple[int, Any] | None] = []
        early: dict[int, Result] = {}
        for index, job in enumerate(jobs):
            if not os.path.isdir(job.workdir):
                early[index] = self.run(job)  # the interface's INTERNAL_ERROR result
                refs.append(None)
            else:
                try:
                    refs.append(self._submit(job))
                except Exception:  # noqa: BLE001 - e.g. no live actor left: run() reports it
                    early[index] = self.run(job)
                    refs.append(None)
        results: list[Result] = []
        for index, sent in enumerate(refs):
            if sent is None:
                results.append(early[index])
                continue
            try:
                results.append(ray.get(sent[1]))
            except Exception:  # noqa: BLE001 - a lost worker or node: not the job's doing
                # One job's lost actor must not fail the batch: run it again through
                # run() (the next live actor; retried once more, then a machine fault).
                self._lost(sent[0])
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
