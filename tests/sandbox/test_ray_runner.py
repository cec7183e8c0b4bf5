"""RayRunner: the same verdicts as the local pool, on a local Ray and on a two-node
``ray.cluster_utils.Cluster``; workdirs travel as archives and are refused when unsafe."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401
from forgegym.policies import make as make_policy
from forgegym.sandbox.jobs import PytestJob, RunStatus
from forgegym.sandbox.runners import ForkServerRunner
from forgegym.sandbox.runners.ray import pack_workdir, unpack_workdir

ENV_ID = "Forge/Bugfix-v0"


def test_workdir_archive_round_trip_and_refusals(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("X = 1\n")
    (src / "test_mod.py").write_text("def test_x():\n    assert True\n")
    (src / "link.py").symlink_to("/etc/passwd")  # never shipped
    dst = tmp_path / "dst"
    dst.mkdir()
    unpack_workdir(pack_workdir(str(src)), str(dst))
    assert sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*.py")) == [
        "pkg/mod.py",
        "test_mod.py",
    ]
    assert (dst / "pkg" / "mod.py").read_text() == "X = 1\n"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("../escape.py")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(ValueError, match="refusing"):
        unpack_workdir(buffer.getvalue(), str(dst))
    assert not (tmp_path / "escape.py").exists()


def _jobs(tmp_path: Path) -> list[PytestJob]:
    cases = {
        "passes": "def test_a():\n    assert 1 + 1 == 2\n",
        "fails": "def test_a():\n    assert 1 + 1 == 3\n",
        "exits": "import os\n\ndef test_a():\n    os._exit(0)\n",
    }
    jobs = []
    for name, body in cases.items():
        workdir = tmp_path / name
        workdir.mkdir()
        (workdir / "test_case.py").write_text(body)
        jobs.append(
            PytestJob(
                workdir=str(workdir),
                targets=["test_case.py"],
                expected_ids=["test_case.py::test_a"],
                timeout_s=30,
            )
        )
    jobs.append(jobs[0].model_copy(update={"workdir": str(tmp_path / "missing")}))
    return jobs


def _groups(n: int) -> list[tuple[str, list[str]]]:
    env = gym.make(ENV_ID, max_steps=1)
    try:
        reference = make_policy("reference", env)
        noop = make_policy("noop", env)
        ids = env.unwrapped.task_bank.task_ids(n, seed=5)
        return [(t, [reference("", {"task_id": t}), noop("", {"task_id": t})]) for t in ids]
    finally:
        env.close()


def _grade(runner: Any, groups: list[tuple[str, list[str]]]) -> list[tuple[float, float]]:
    env = gym.make(ENV_ID, max_steps=1, runner=runner)
    try:
        out = []
        for task_id, completions in groups:
            for reward, breakdown in env.unwrapped.grade_completions(task_id, completions):
                out.append((reward, breakdown.score))
        return out
    finally:
        env.close()


ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("ray-jobs")
    jobs = _jobs(tmp)
    groups = _groups(2)
    with ForkServerRunner(workers=2) as local:
        statuses = [r.status for r in local.run_many(jobs)]
        graded = _grade(local, groups)
    return {"jobs": jobs, "statuses": statuses, "groups": groups, "graded": graded}


@pytest.mark.slow
def test_ray_local_same_verdicts(local_verdicts: dict[str, Any]) -> None:
    from forgegym.sandbox.runners import get_runner
    from forgegym.sandbox.runners.ray import RayRunner

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        runner = get_runner("ray")  # what runner="ray" resolves to
        assert isinstance(runner, RayRunner) and runner.workers == 2
        results = runner.run_many(local_verdicts["jobs"])
        assert [r.status for r in results] == local_verdicts["statuses"]
        assert local_verdicts["statuses"][:2] == [RunStatus.COMPLETED] * 2
        assert results[0].all_passed and not results[1].all_passed
        assert local_verdicts["statuses"][2] is RunStatus.CRASHED
        assert results[3].status is RunStatus.INTERNAL_ERROR  # missing workdir
        assert _grade("ray", local_verdicts["groups"]) == local_verdicts["graded"]
        runner.close()
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_ray_two_node_cluster_same_verdicts(local_verdicts: dict[str, Any]) -> None:
    from ray.cluster_utils import Cluster

    from forgegym.sandbox.runners.ray import RayRunner

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    try:
        worker_node = cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, log_to_driver=False)
        runner = RayRunner()
        try:
            assert len({node["node_id"] for node in runner.nodes}) == 2  # an actor per node
            assert runner.workers == 2
            jobs = local_verdicts["jobs"][:2] * 2
            results = runner.run_many(jobs)
            assert [r.status for r in results] == local_verdicts["statuses"][:2] * 2
            ran = ray.get([actor.node.remote() for actor in runner._actors])
            assert all(node["jobs_run"] >= 1 for node in ran)  # both nodes graded
            assert _grade(runner, local_verdicts["groups"]) == local_verdicts["graded"]
            # A node is lost (spot preemption): its actor cannot be restarted there, so
            # its jobs move to the other node's actor with their true verdicts and it
            # leaves the rotation.
            cluster.remove_node(worker_node)
            results = runner.run_many(jobs)
            assert [r.status for r in results] == local_verdicts["statuses"][:2] * 2
            assert all(r.fault is None for r in results)
            assert runner.live_actors == 1 and runner.workers == 1
        finally:
            runner.close()
            ray.shutdown()
    finally:
        cluster.shutdown()


@pytest.mark.slow
def test_ray_lost_worker_is_replaced_and_then_a_machine_fault(tmp_path: Path) -> None:
    """The node's actor process is killed mid-run: Ray starts a replacement and the lost
    jobs are retried on it to their true verdicts; the next batch grades normally on the
    same runner. Once the restarts are used up, the actor leaves the rotation and the
    jobs are machine faults with their cause (retried once first), never the code's
    crash, and the batch never raises."""
    import os
    import signal
    import threading
    import time

    from forgegym.sandbox.runners.ray import RayRunner

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        runner = RayRunner(max_restarts=1)
        actor = runner._actors[0]
        first = ray.get(actor.node.remote())
        slow = []
        for name in ("slow1", "slow2"):
            workdir = tmp_path / name
            workdir.mkdir()
            (workdir / "test_case.py").write_text(
                "import time\n\ndef test_a():\n    time.sleep(3)\n"
            )
            slow.append(
                PytestJob(
                    workdir=str(workdir),
                    targets=["test_case.py"],
                    expected_ids=["test_case.py::test_a"],
                    timeout_s=60,
                )
            )

        def kill_mid_run() -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # both jobs are in the actor by now
                if ray.get(actor.node.remote())["jobs_run"] >= 2:
                    break
                time.sleep(0.05)
            time.sleep(0.3)
            os.kill(first["pid"], signal.SIGKILL)

        killer = threading.Thread(target=kill_mid_run)
        killer.start()
        results = runner.run_many(slow)
        killer.join()
        assert all(r.fault is None for r in results), results
        assert all(r.status is RunStatus.COMPLETED and r.all_passed for r in results)
        second = ray.get(actor.node.remote())
        assert second["pid"] != first["pid"]  # a replacement, not the dead one
        jobs = _jobs(tmp_path)[:2]
        results = runner.run_many(jobs)  # the next batch, no rebuild
        assert [r.status for r in results] == [RunStatus.COMPLETED] * 2
        assert results[0].all_passed and not results[1].all_passed
        os.kill(second["pid"], signal.SIGKILL)  # max_restarts=1: this loss is final
        results = runner.run_many(jobs)
        assert all(r.status is RunStatus.INTERNAL_ERROR for r in results), results
        assert all(r.fault and r.fault.startswith("setup:") for r in results)
        assert all("actor is dead" in (r.fault or "") for r in results)
        assert runner.live_actors == 0
    finally:
        ray.shutdown()
