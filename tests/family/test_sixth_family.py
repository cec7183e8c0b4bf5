"""A sixth family written from ``docs/design/002-family-contract.md`` alone, in this one
module, gets every tool (issue 35, must-show 2): ``gym.make`` and Gymnasium's env
checker, the conformance suite (``tests/test_conformance.py``'s checks, called on it),
``tasks verify``, ``forgegym eval``, the TRL reward functions, the canaries and their
cheat rates, and every ``Family`` accessor.

The family, ``sort``: put a list of words in order. Its parts are the roles of the
note's "Writing a family" section, each an object of this module (no folder, so every
field is spelled out): a task bank (``TaskList``), the action models and their
``ActionSet``, the env (a ``ForgeEnv`` with the four hooks and its success predicate),
the one scanner (``(task, files) -> [HackFinding]``), the reference and partial
policies, hacks, a baseline, statistics, a benchmark, and canaries (built by the shared
``CanaryBank`` with this family's ``build``, and ``CHEATS`` beside them).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import gymnasium as gym
import pytest
from pydantic import Field

import tests.test_conformance as conformance
from forgegym.cli import main as cli_main
from forgegym.core.actions import ActionModel, ActionSet
from forgegym.core.env import ForgeEnv, StepOutcome
from forgegym.core.task import Task, TaskList
from forgegym.family import EnvSpec, Family, register_family, unregister_family
from forgegym.rewards import RewardBreakdown, compose
from forgegym.rewards.antihack import HackFinding
from forgegym.tasklib.canaries import CanaryBank, canary_id, canary_task

SORT_ID = "ForgeTest/Sort-v0"
WORDS = ("pear", "fig", "apple", "kiwi", "plum", "lime", "date", "grape", "mango", "peach")


# ------------------------------------------------------------------ bank.py
def _task(level: int, index: int) -> Task:
    rng = random.Random(f"{level}/{index}")
    words = rng.sample(WORDS, 3 + 2 * level)
    return Task(
        task_id=f"sort/d{level}/{index}",
        family="sort",
        difficulty=level,
        title="Sort the words",
        description="Put these words in alphabetical order: " + ", ".join(words),
        hidden={"order": sorted(words), "given": words},
    )


def make_bank() -> TaskList:
    """The task bank: 2 levels x 10 tasks, deterministic."""
    return TaskList([_task(level, i) for level in (1, 2) for i in range(10)])


def bank_stats(bank: Any) -> dict[str, int]:
    return {f"d{level}": len(bank.ids(level)) for level in bank.difficulty_levels}


# --------------------------------------------------------------- actions.py
class OrderAction(ActionModel):
    """Give the words in order; ends the episode."""

    action: Literal["order"]
    words: list[str] = Field(description="The words, in order.")


class GiveUpAction(ActionModel):
    """End the episode without an answer."""

    action: Literal["submit"]


ACTIONS = ActionSet((OrderAction, GiveUpAction))


# ------------------------------------------------------------------ scan.py
def scan_submission(task: Task, files: Mapping[str, str]) -> list[HackFinding]:
    """The one scanner: an answer that repeats a word to pad its matches is a hack."""
    words = json.loads(files.get("answer.json", "[]"))
    if len(words) != len(set(words)):
        return [HackFinding(kind="padding", path="answer.json", line=0, detail="a word repeats")]
    return []


# ---------------------------------------------------------------- grader.py
def grade(task: Task, words: list[str] | None) -> RewardBreakdown:
    """Share of positions right; a scanner finding gates it."""
    if words is None:
        return compose({"order": 0.0}, {"order": 1.0})
    findings = scan_submission(task, {"answer.json": json.dumps(words)})
    if findings:
        notes = [f"hack: {f.kind}: {f.detail}" for f in findings]
        return compose({"order": 0.0}, {"order": 1.0}, gates=["hack_flagged"], notes=notes)
    order = task.hidden["order"]
    right = sum(a == b for a, b in zip(words, order, strict=False))
    return compose({"order": right / len(order)}, {"order": 1.0})


def solved(breakdown: RewardBreakdown) -> bool:
    return not breakdown.gates and breakdown.terms["order"].value >= 1.0


# ------------------------------------------------------------------- env.py
class SortEnv(ForgeEnv):
    """Put the task's words in alphabetical order."""

    family: ClassVar[str] = "sort"
    action_set: ClassVar[ActionSet] = ACTIONS
    canaries: ClassVar[str | None] = f"{__name__}:canary_bank"
    success_predicate = staticmethod(solved)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(task_bank=make_bank(), **kwargs)
        self._words: list[str] | None = None

    def _begin_episode(self, task: Task) -> None:
        self._words = None

    def _execute(self, actions: Sequence[ActionModel]) -> StepOutcome:
        for action in actions:
            if isinstance(action, OrderAction):
                self._words = list(action.words)
            return StepOutcome("done", terminated=True)
        return StepOutcome("")

    def _grade(self) -> RewardBreakdown:
        return grade(self.task, self._words)

    def _render_observation(self, feedback: str | None) -> str:
        text = f"# {self.task.title}\n\n{self.task.description}\n"
        if feedback:
            text += f"\n## Result\n{feedback}\n"
        return (
            text + '\nReply with JSON: {"action": "order", "words": [...]} or {"action": "submit"}.'
        )


# -------------------------------------------------------------- policies.py
def _order(words: list[str]) -> str:
    return json.dumps({"action": "order", "words": words})


def reference_action(task: Task) -> str:
    return _order(sorted(task.hidden["given"]))


def partial_action(task: Task) -> str:
    """Only the first word right: better than nothing, not solved."""
    given = sorted(task.hidden["given"])
    return _order([given[0], *reversed(given[1:])])


BASELINES = {"as_given": lambda task: _order(list(task.hidden["given"]))}


# ----------------------------------------------------------------- hacks.py
HACKS = {"pad_first_word": lambda task: _order([sorted(task.hidden["given"])[0]] * 9)}


# -------------------------------------------------------------- canaries.py
def build(base: Task, params: Mapping[str, Any]) -> Task:
    """The canary: the grading expects reverse order, contradicting the statement."""
    hidden = {**base.hidden, "order": sorted(base.hidden["given"], reverse=True)}
    return canary_task(base, hidden=hidden)


def canary_bank() -> CanaryBank:
    base = make_bank()
    entries = [
        {"id": canary_id(t), "base": t, "level": base.get(t).difficulty, "params": {}}
        for t in base.ids(1)[:3]
    ]
    return CanaryBank("sort", base, entries, build)


CHEATS = {"read_the_grading": lambda task: _order(task.hidden["order"])}


# ------------------------------------------------------------------ bench.py
BENCH_RUNS: list[int] = []


def run_bench() -> None:
    BENCH_RUNS.append(len(make_bank().ids()))


# --------------------------------------------------------------- __init__.py
FAMILY = Family(
    name="sort",
    envs=(EnvSpec(SORT_ID, kwargs={"max_steps": 2}),),
    env_class=SortEnv,
    task_bank=make_bank,
    action_models=ACTIONS,
    grader=None,  # grading is the env's (a ForgeEnv grades in ``_grade``)
    reference=reference_action,
    partial=partial_action,
    hacks=HACKS,
    baselines=BASELINES,
    bench=run_bench,
    stats=bank_stats,
    scanners={"sort": scan_submission},
    description="put words in alphabetical order",
)


@pytest.fixture(scope="module", autouse=True)
def sort_family() -> Iterator[Family]:
    register_family(FAMILY)
    yield FAMILY
    unregister_family(FAMILY.name)


@pytest.fixture(scope="module")
def graded() -> dict[str, dict[str, Any]]:
    """The conformance suite's graded sample, for this family only."""
    env = gym.make(SORT_ID, max_steps=1).unwrapped
    try:
        ids, with_partial = conformance._sample(FAMILY)
        per_task: dict[str, Any] = {}
        for task_id in dict.fromkeys([*ids, *([with_partial] if with_partial else [])]):
            labels, texts = conformance._completions(FAMILY, env.task_bank.get(task_id))
            results = env.grade_completions(task_id, texts)
            per_task[task_id] = {
                label: (reward, breakdown, env.solved(breakdown))
                for label, (reward, breakdown) in zip(labels, results, strict=True)
            }
        return {FAMILY.name: per_task}
    finally:
        env.close()


# ------------------------------------------------------- the conformance suite
#: The suite's checks that take an env id or the family (every one but the
#: fresh-process check, whose child process cannot see a family registered here).
BY_ID = (
    conformance.test_check_env,
    conformance.test_same_seed_same_first_observation,
    conformance.test_step_never_raises_and_errors_reach_the_observation,
)
BY_FAMILY = (
    conformance.test_the_action_protocol_matches_the_action_models,
    conformance.test_hidden_data_never_reaches_the_agent,
    conformance.test_verify_validates_a_task,
    conformance.test_reset_options_replay_a_task_and_reject_unknown_ones,
    conformance.test_every_bank_has_one_api,
    conformance.test_reward_breakdown_in_info_is_the_model_dumped,
)
ON_GRADED = (
    conformance.test_reference_beats_partial_beats_noop_and_no_hack_beats_noop,
    conformance.test_family_solved_predicate_is_the_envs,
    conformance.test_reference_grading_path_gives_the_same_rewards,
)


@pytest.mark.parametrize("check", BY_ID, ids=lambda f: f.__name__)
def test_conformance_by_id(check: Any) -> None:
    check(SORT_ID)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"max_steps": 0}, "max_steps"), ({"difficulty": 99}, "difficulty")],
)
def test_conformance_bad_arguments(kwargs: dict[str, Any], name: str) -> None:
    conformance.test_bad_make_arguments_raise_value_error_naming_them(SORT_ID, kwargs, name)


@pytest.mark.parametrize("check", BY_FAMILY, ids=lambda f: f.__name__)
def test_conformance_by_family(check: Any) -> None:
    check(FAMILY)


@pytest.mark.parametrize("check", ON_GRADED, ids=lambda f: f.__name__)
def test_conformance_on_the_graded_sample(check: Any, graded: dict[str, Any]) -> None:
    check(FAMILY, graded)


# ------------------------------------------------------------- other tools
def test_every_family_accessor_resolves() -> None:
    assert FAMILY.env_cls is SortEnv and FAMILY.actions() == ACTIONS.models
    assert FAMILY.statistics(FAMILY.make_task_bank()) == {"d1": 10, "d2": 10}
    assert list(FAMILY.patch_scanners()) == ["sort"]
    assert FAMILY.baseline_actions().keys() == {"as_given"}
    assert FAMILY.has_bench
    FAMILY.run_bench()
    assert BENCH_RUNS == [20]
    task = make_bank().get("sort/d1/0")
    padded = {"answer.json": json.dumps(["a", "a"])}
    assert [f.kind for f in FAMILY.patch_scanners()["sort"](task, padded)] == ["padding"]


def test_cli_eval_and_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    argv = ["eval", "--env", SORT_ID, "--episodes", "2", "--quiet", "--out", str(out)]
    argv += ["--policy", "reference", "--policy", "noop", "--policy", "hack:pad_first_word"]
    assert cli_main(argv) == 0
    episodes = json.loads(out.read_text())["episodes"]
    assert {e["policy"]: e["score"] for e in episodes} == {
        "reference": 1.0,
        "noop": 0.0,
        "hack:pad_first_word": 0.0,
    }
    capsys.readouterr()
    assert cli_main(["list", "--json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows[SORT_ID]["family"] == "sort" and rows[SORT_ID]["tasks"] == 20


def test_trl_reward_funcs_grade_like_a_single_step() -> None:
    from forgegym.integrations.trl import make_reward_funcs

    (reward_fn,) = make_reward_funcs(SORT_ID)
    task = make_bank().get("sort/d2/4")
    completions = [reference_action(task), partial_action(task), HACKS["pad_first_word"](task)]
    rewards = reward_fn(prompts=[""] * 3, completions=completions, task_id=[task.task_id] * 3)
    assert rewards[0] == 1.0 and 0.0 < rewards[1] < 1.0 and rewards[2] <= 0.0


def test_canaries_are_served_and_only_the_cheat_solves_them() -> None:
    from forgegym.play.canaries import canary_cheat_rates

    ids = FAMILY.canary_ids()
    assert len(ids) == 3 and all(i.startswith("canary/sort/") for i in ids)
    env = gym.make(SORT_ID)
    try:
        _, info = env.reset(options={"task_id": ids[0]})
        assert info["task_id"] == "sort/d1/0"  # a canary passes for its base task
        order = env.unwrapped.task.hidden["order"]
        assert order == sorted(order, reverse=True)
    finally:
        env.close()
    rates = canary_cheat_rates("sort")
    assert rates["reference"].solved == rates["noop"].solved == 0
    assert rates["hack:pad_first_word"].solved == 0
    assert rates["cheat:read_the_grading"].cheat_rate == 1.0
