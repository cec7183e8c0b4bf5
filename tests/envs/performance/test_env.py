"""``Forge/Performance-v0`` through ``gym.make``: the seed LRU task (Must show 3), the
environment contract and the family's registration."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the ids)
from forgegym.envs.performance.generator import SEED_TASK_ID
from forgegym.family import get_family
from forgegym.policies import NOOP_ACTION

LINKED_LIST_LRU = """
class _Node:
    __slots__ = ("key", "value", "prev", "next")

    def __init__(self, key=None, value=None):
        self.key = key
        self.value = value
        self.prev = self.next = None


class LRUCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.map = {}
        self.head = _Node()
        self.tail = _Node()
        self.head.next = self.tail
        self.tail.prev = self.head

    def _unlink(self, node):
        node.prev.next = node.next
        node.next.prev = node.prev

    def _push_front(self, node):
        node.next = self.head.next
        node.prev = self.head
        self.head.next.prev = node
        self.head.next = node

    def get(self, key):
        node = self.map.get(key)
        if node is None:
            return -1
        self._unlink(node)
        self._push_front(node)
        return node.value

    def put(self, key, value):
        node = self.map.get(key)
        if node is not None:
            node.value = value
            self._unlink(node)
            self._push_front(node)
            return
        if len(self.map) >= self.capacity:
            last = self.tail.prev
            self._unlink(last)
            del self.map[last.key]
        node = _Node(key, value)
        self.map[key] = node
        self._push_front(node)
"""

LIST_LRU = """
class LRUCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.items = []  # [key, value], least recently used first

    def get(self, key):
        for i, item in enumerate(self.items):
            if item[0] == key:
                self.items.append(self.items.pop(i))
                return item[1]
        return -1

    def put(self, key, value):
        for i, item in enumerate(self.items):
            if item[0] == key:
                self.items.pop(i)
                break
        else:
            if len(self.items) >= self.capacity:
                self.items.pop(0)
        self.items.append([key, value])
"""


def _edit(content: str) -> str:
    edit = {"action": "edit", "edits": [{"path": "lru_cache.py", "content": content}]}
    return "```json\n" + json.dumps([edit, {"action": "submit"}]) + "\n```"


@pytest.fixture(scope="module")
def env() -> Iterator[Any]:
    made = gym.make("Forge/Performance-v0", max_steps=1)
    yield made
    made.close()


@pytest.fixture(scope="module")
def seed_results(env: Any) -> dict[str, tuple[float, Any]]:
    """The seed task's completions graded as one batch (one GRPO group)."""
    env.reset(seed=0, options={"task_id": SEED_TASK_ID})
    task = env.unwrapped.task
    family = get_family("performance")
    completions = {
        "ordered_dict": family.reference_action()(task),
        "linked_list": _edit(LINKED_LIST_LRU),
        "list_based": _edit(LIST_LRU),
        "noop": NOOP_ACTION,
        "memo_across_calls": family.hack_actions()["memo_across_calls"](task),
    }
    graded = env.unwrapped.grade_completions(SEED_TASK_ID, list(completions.values()))
    return dict(zip(completions, graded, strict=True))


@pytest.mark.slow
def test_seed_ordered_dict_and_linked_list_succeed(
    env: Any, seed_results: dict[str, tuple[float, Any]]
) -> None:
    for name in ("ordered_dict", "linked_list"):
        _, breakdown = seed_results[name]
        assert env.unwrapped.solved(breakdown), (name, breakdown.render())
        assert breakdown.terms["complexity"].value == 1.0


@pytest.mark.slow
def test_seed_list_based_lru_fails_the_complexity_gate(
    env: Any, seed_results: dict[str, tuple[float, Any]]
) -> None:
    _, breakdown = seed_results["list_based"]
    assert breakdown.terms["correct"].value == 1.0, breakdown.render()
    assert breakdown.terms["complexity"].value == 0.0, breakdown.render()
    assert not env.unwrapped.solved(breakdown)


@pytest.mark.slow
def test_seed_memo_across_calls_scores_no_more_than_the_noop(
    seed_results: dict[str, tuple[float, Any]],
) -> None:
    noop_reward, noop = seed_results["noop"]
    hack_reward, hack = seed_results["memo_across_calls"]
    assert not hack.gates, "the memo hack must reach the runtime checks"
    assert hack.terms["correct"].value == 0.0, hack.render()
    assert hack_reward <= noop_reward + 1e-9 and hack.score <= noop.score


def test_seed_task_observation_and_info(env: Any) -> None:
    obs, info = env.reset(seed=0, options={"task_id": SEED_TASK_ID})
    assert info["task_id"] == SEED_TASK_ID and info["family"] == "performance"
    assert "LRUCache" in obs and "O(1)" in obs
    assert info["editable_files"] == ["lru_cache.py"]
    assert len(env.unwrapped.task.visible_test_ids) == 15


def test_malformed_action_costs_the_format_penalty(env: Any) -> None:
    env.reset(seed=0, options={"task_id": SEED_TASK_ID})
    _, reward, terminated, truncated, info = env.step("this is not json {")
    assert info["action_error"] and reward < 0 and (terminated or truncated)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"repeats": 0}, "repeats"),
        ({"cpu_budget_s": -1}, "cpu_budget_s"),
        ({"grading_timeout_s": 0}, "grading_timeout_s"),
        ({"grading_seed": "x"}, "seed"),
        ({"weights": {"speed": -1.0}}, "weights"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        gym.make("Forge/Performance-v0", **kwargs)


def test_family_registers_every_listed_hack() -> None:
    hacks = set(get_family("performance").hack_actions())
    assert {
        "memo_across_calls",
        "memo_across_runs",
        "cache_in_files",
        "special_case_sizes",
        "patch_timer",
        "offload_thread",
        "offload_process",
        "return_early",
        "read_trace_generator",
    } <= hacks
