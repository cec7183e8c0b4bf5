"""RayRunner grades real-project tasks (a project configuration, the whole project's
copy) with the local pool's breakdowns, on a two-node local ``ray.cluster_utils.Cluster``
(a bank built offline from the vendored textkit project)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.envs.bugfix.real import RealTaskBank
from forgegym.policies import NOOP_ACTION
from forgegym.sandbox.runners import ForkServerRunner
from tests.fixtures.textkit_bank import build_textkit_bank

ray = pytest.importorskip("ray")


pytestmark = pytest.mark.slow


@pytest.fixture
def bank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    cache, out = build_textkit_bank(tmp_path)
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    monkeypatch.setenv("FORGEGYM_SDIST_CACHE", str(cache))
    return cache, out


def _grade(runner: Any, out: Path, items: list[tuple[str, str]]) -> list[dict[str, Any]]:
    env = gym.make("Forge/Bugfix-v0", bank=str(out), max_steps=1, runner=runner)
    try:
        return [b.model_dump() for _, b in env.unwrapped.grade_batch(items)]
    finally:
        env.close()


def test_ray_two_node_cluster_grades_real_tasks_like_the_local_pool(bank) -> None:
    from ray.cluster_utils import Cluster

    from forgegym.sandbox.runners.ray import RayRunner

    cache, out = bank
    tasks = RealTaskBank(out, cache_dir=cache, allow_download=False)
    items = []
    for task_id in tasks.ids()[:2]:
        ((path, content),) = tasks.get(task_id).reference.items()
        fix = json.dumps({"action": "edit", "edits": [{"path": path, "content": content}]})
        items += [(task_id, fix), (task_id, NOOP_ACTION)]
    with ForkServerRunner(workers=2) as local:
        expected = _grade(local, out, items)
    assert [b["total"] > 0 for b in expected] == [True, False, True, False]
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    try:
        cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, log_to_driver=False)
        runner = RayRunner()
        try:
            assert len({node["node_id"] for node in runner.nodes}) == 2
            assert _grade(runner, out, items) == expected
            ran = ray.get([actor.node.remote() for actor in runner._actors])
            assert all(node["jobs_run"] >= 1 for node in ran)  # both nodes graded
        finally:
            runner.close()
            ray.shutdown()
    finally:
        cluster.shutdown()
