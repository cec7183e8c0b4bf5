"""forgegym's extra endpoints: the task bank, offline grading, the curriculum and the
families' statistics hooks (found generically, 404 when absent)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import httpx
import pytest
from pydantic import BaseModel

import forgegym  # noqa: F401
from forgegym.family import families
from forgegym.policies import make as make_policy
from tests.server.conftest import SERVED_ENV, live_server


def test_tasks_are_paged_and_never_leak_grading_data(server: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        first = client.get("/tasks", params={"limit": 5}).json()
        second = client.get("/tasks", params={"limit": 5, "offset": 5}).json()
        both = client.get("/tasks", params={"limit": 10}).json()
        ids = [t["task_id"] for t in first["tasks"] + second["tasks"]]
        assert ids == [t["task_id"] for t in both["tasks"]] and len(set(ids)) == 10
        bank = server.service.task_bank
        assert first["bank_size"] == len(bank)
        for summary in both["tasks"]:
            assert set(summary) == {"task_id", "family", "difficulty", "title", "description"}
            task = bank.get(summary["task_id"])
            for secret in task.reference.values():
                assert secret not in json.dumps(summary)
        level = first["difficulty_levels"][0]
        only = client.get("/tasks", params={"difficulty": level}).json()["tasks"]
        assert {t["difficulty"] for t in only} == {level}
        assert client.get("/tasks", params={"difficulty": 999}).status_code == 422
        assert client.get("/tasks", params={"limit": 0}).status_code == 422


def test_grader_equals_a_single_turn_step(server: Any) -> None:
    env = gym.make(SERVED_ENV, max_steps=1)
    try:
        observation, info = env.reset(seed=9)
        task_id = info["task_id"]
        completions = [make_policy("reference", env)(observation, info), "no action here"]
        expected = []
        for completion in completions:
            env.reset(options={"task_id": task_id})
            _, reward, _, _, step_info = env.step(completion)
            expected.append((reward, step_info["score"], step_info["success"]))
    finally:
        env.close()
    with httpx.Client(base_url=server.url, timeout=300) as client:
        body = client.post("/grader", json={"task_id": task_id, "completions": completions})
        results = body.json()["results"]
        assert [(r["reward"], r["score"], r["success"]) for r in results] == expected
        assert results[0]["success"] is True and results[1]["action_error"]
        assert results[0]["reward_breakdown"]["terms"]
        unknown = client.post("/grader", json={"task_id": "no/such", "completions": ["x"]})
        assert unknown.status_code == 422 and "task" in unknown.json()["detail"]
        assert (
            client.post("/grader", json={"task_id": task_id, "completions": []}).status_code == 422
        )


def test_a_canary_is_served_under_its_base_id_and_graded_as_the_canary(server: Any) -> None:
    """D5: ``/reset`` on a canary shows its base task's id (responses and ``/state``);
    ``/grader`` on the canary id grades the canary, on the base id the base task."""
    from forgegym.envs.bugfix.canaries import disguised_special_case
    from forgegym.family import get_family
    from forgegym.tasklib.canaries import base_id_of

    canaries = get_family("bugfix").canary_bank()
    cid = canaries.task_ids(1, seed=0)[0]
    cheat = disguised_special_case(canaries.get(cid))
    honest = get_family("bugfix").canary_honest_action()(canaries.get(cid))
    with httpx.Client(base_url=server.url, timeout=300) as client:
        reset = client.post("/reset", json={"options": {"task_id": cid}, "episode_id": "c"})
        assert reset.status_code == 200
        assert "canary/" not in json.dumps(reset.json())
        assert reset.json()["observation"]["info"]["task_id"] == base_id_of(cid)
        state = client.get("/state", params={"episode_id": "c"}).json()
        assert state["task_id"] == base_id_of(cid)
        client.post("/close", json={"episode_id": "c"})
        texts = [honest, cheat]
        on_canary = client.post("/grader", json={"task_id": cid, "completions": texts})
        on_base = client.post("/grader", json={"task_id": base_id_of(cid), "completions": texts})
        # The honest fix solves the base task, not the canary; the cheat solves the canary.
        assert [r["success"] for r in on_canary.json()["results"]] == [False, True]
        assert on_base.json()["results"][0]["success"] is True


def test_curriculum_endpoints(server: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for path in ("/curriculum/stats", "/curriculum/queue", "/curriculum/curve"):
            missing = client.get(path)
            assert missing.status_code == 404 and "--curriculum" in missing.json()["detail"]
    with (
        live_server(env_kwargs={"max_steps": 1}, curriculum=True) as live,
        httpx.Client(base_url=live.url, timeout=300) as client,
    ):
        played = []
        for i in range(3):
            reset = client.post("/reset", json={"episode_id": f"c{i}"}).json()
            played.append(reset["observation"]["info"]["task_id"])
            step = {"episode_id": f"c{i}", "action": {"text": '{"action": "submit"}'}}
            assert client.post("/step", json=step).json()["done"] is True
        stats = client.get("/curriculum/stats").json()
        assert stats["episode"] == 3
        queue = client.get("/curriculum/queue").json()
        rows = {row["task_id"]: row for row in queue["tasks"]}
        assert set(played) <= set(rows)
        assert sum(rows[t]["trials"] for t in set(played)) == 3
        curve = client.get("/curriculum/curve", params={"window": 2}).json()
        assert [p["episode"] for p in curve["points"]] == [1, 2, 3]
        assert all(0.0 <= p["rolling_success"] <= 1.0 for p in curve["points"])


class _ToyStats(BaseModel):
    per_domain: dict[str, dict[str, int]]


@pytest.fixture
def toy_stats_family() -> Iterator[str]:
    """A family registered by a test, with a statistics hook returning a model."""
    from forgegym.family import Family, register_family, unregister_family

    served = next(f for f in families() if SERVED_ENV in f.env_ids)
    name = "toystats"
    register_family(
        Family(
            name=name,
            envs=("Toy/Stats-v0",),
            env_class=served.env_class,
            stats=lambda bank: {"never": 1},  # the report wins over the bank counts
            report=lambda: _ToyStats(per_domain={"prose": {"date": 3, "number": 1}}),
        )
    )
    try:
        yield name
    finally:
        unregister_family(name)


def test_family_stats_come_from_the_registered_hooks(server: Any, toy_stats_family: str) -> None:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        listed = {f["name"]: f for f in client.get("/families").json()}
        assert set(listed) == {f.name for f in families()}
        assert listed[toy_stats_family]["has_stats"] is True
        toy = client.get(f"/{toy_stats_family}/stats")
        assert toy.json() == {"per_domain": {"prose": {"date": 3, "number": 1}}}
        for family in families():
            if family.report is None and family.stats is not None:
                stats = client.get(f"/{family.name}/stats").json()
                assert stats == json.loads(json.dumps(family.statistics(family.make_task_bank())))
        absent = client.get("/nosuchfamily/stats")
        assert absent.status_code == 404
        assert (
            "nosuchfamily" in absent.json()["detail"]
            and toy_stats_family in absent.json()["detail"]
        )
