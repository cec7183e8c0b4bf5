"""The Family registry: a family registered from this one module (no file under
``src/`` changes) gets every generic tool, and registration is duplicate-checked.

The toy family ``guess`` is a non-code family with its own action models (``hint``,
``answer``, ``submit``): the agent must answer a task's target number. Its grading
is in-process arithmetic, so these tests do not need the sandbox runner.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import gymnasium as gym
import numpy as np
import pytest
from pydantic import Field

import forgegym
from forgegym.cli import main as cli_main
from forgegym.core.actions import ActionModel, ActionSet
from forgegym.core.env import ForgeEnv, StepOutcome
from forgegym.core.task import Task, UnknownTaskError
from forgegym.family import EnvSpec, Family, family_for_env, register_family, unregister_family
from forgegym.rewards import RewardBreakdown, compose

TOY_ID = "ForgeTest/Guess-v0"
PER_LEVEL = 50


class HintAction(ActionModel):
    """Ask whether the target is above a number."""

    action: Literal["hint"]
    above: int = Field(description="The number to compare the target with.")


class AnswerAction(ActionModel):
    """Give your final answer; ends the episode."""

    action: Literal["answer"]
    value: int = Field(description="Your answer: the target number.")
    confidence: float = Field(default=0.5, ge=0.0, le=1.0, description="How sure you are.")


class GiveUpAction(ActionModel):
    """End the episode without an answer."""

    action: Literal["submit"]


GUESS_ACTIONS = (HintAction, AnswerAction, GiveUpAction)


class GuessBank:
    family = "guess"
    difficulty_levels = (1, 2)

    def __len__(self) -> int:
        return PER_LEVEL * len(self.difficulty_levels)

    def get(self, task_id: str) -> Task:
        try:
            family, level, index = task_id.split("/")
            d, i = int(level.removeprefix("d")), int(index)
        except ValueError:
            raise UnknownTaskError(task_id) from None
        if family != "guess" or d not in self.difficulty_levels or not 0 <= i < PER_LEVEL:
            raise UnknownTaskError(task_id)
        target = 10 ** (d + 1) + 7 * i
        return Task(
            task_id=task_id,
            family="guess",
            difficulty=d,
            title="Guess the number",
            description=f"The target lies in [0, {10 ** (d + 2)}).",
            hidden={"target": target},
        )

    def sample(self, rng: np.random.Generator, difficulty: int | None = None) -> Task:
        d = int(rng.choice(self.difficulty_levels)) if difficulty is None else difficulty
        return self.get(f"guess/d{d}/{int(rng.integers(PER_LEVEL))}")

    def ids(self, difficulty: int | None = None) -> list[str]:
        levels = self.difficulty_levels if difficulty is None else (difficulty,)
        return [f"guess/d{d}/{i}" for d in levels for i in range(PER_LEVEL)]

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> list[str]:
        levels = self.difficulty_levels if difficulty is None else (difficulty,)
        universe = [f"guess/d{d}/{i}" for d in levels for i in range(PER_LEVEL)]
        order = np.random.default_rng(seed).permutation(len(universe))
        return [universe[int(k)] for k in order[:n]]


def guess_stats(bank: GuessBank) -> dict[str, int]:
    return {f"d{d}": PER_LEVEL for d in bank.difficulty_levels}


class GuessEnv(ForgeEnv):
    """Answer the task's target number (hints allowed)."""

    family: ClassVar[str] = "guess"
    action_set: ClassVar[ActionSet] = ActionSet(GUESS_ACTIONS)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(task_bank=GuessBank(), **kwargs)
        self._answer: int | None = None

    def _begin_episode(self, task: Task) -> None:
        self._answer = None

    def _execute(self, actions: Sequence[ActionModel]) -> StepOutcome:
        target = int(self.task.hidden["target"])
        lines = []
        for action in actions:
            if isinstance(action, HintAction):
                lines.append(f"above {action.above}: {target > action.above}")
            elif isinstance(action, AnswerAction):
                self._answer = action.value
                return StepOutcome("\n".join([*lines, "answered"]), terminated=True)
            else:
                return StepOutcome("\n".join([*lines, "gave up"]), terminated=True)
        return StepOutcome("\n".join(lines))

    def _grade(self) -> RewardBreakdown:
        target = int(self.task.hidden["target"])
        if self._answer is None:
            closeness = 0.0
        elif abs(self._answer) > 10**9:  # an absurd answer is flagged, never credited
            return compose({"closeness": 0.0}, {"closeness": 1.0}, gates=["hack_flagged"])
        else:
            closeness = max(0.0, 1.0 - abs(self._answer - target) / target)
        return compose({"closeness": closeness}, {"closeness": 1.0})

    def _render_observation(self, feedback: str | None) -> str:
        text = f"# {self.task.title}\n\n{self.task.description}\n"
        if feedback:
            text += f"\n## Result\n{feedback}\n"
        return text + '\nReply with JSON, e.g. {"action": "answer", "value": 3}.'


def _answer(value: int) -> str:
    return json.dumps({"action": "answer", "value": value})


FAMILY = Family(
    name="guess",
    envs=(EnvSpec(TOY_ID, kwargs={"max_steps": 4}),),
    env_class=GuessEnv,
    task_bank=GuessBank,
    action_models=GUESS_ACTIONS,
    reference=lambda task: _answer(task.hidden["target"]),
    partial=lambda task: _answer(task.hidden["target"] // 2),
    hacks={"absurd_answer": lambda task: _answer(10**12)},
    stats=guess_stats,
)


@pytest.fixture(scope="module", autouse=True)
def guess_family() -> Iterator[Family]:
    register_family(FAMILY)
    yield FAMILY
    unregister_family(FAMILY.name)


# ------------------------------------------------------------ registration
def test_registered_ids_reach_gymnasium_and_the_id_list() -> None:
    assert TOY_ID in gym.registry and TOY_ID in forgegym.env_ids()
    assert family_for_env(TOY_ID) is FAMILY
    env = gym.make(TOY_ID)
    try:
        assert env.unwrapped.max_steps == 4  # the EnvSpec kwargs
    finally:
        env.close()


def test_duplicate_names_and_ids_are_errors() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_family(FAMILY)
    clash = Family(name="guess2", envs=(EnvSpec(TOY_ID),), env_class=GuessEnv)
    with pytest.raises(ValueError, match="already taken"):
        register_family(clash)
    with pytest.raises(ValueError, match="name"):
        Family(name="not a name", envs=(EnvSpec("X/Y-v0"),), env_class=GuessEnv)


def test_env_class_must_declare_the_family_name() -> None:
    wrong = Family(name="other", envs=(EnvSpec("ForgeTest/Other-v0"),), env_class=GuessEnv)
    with pytest.raises(ValueError, match="env_class"):
        _ = wrong.env_cls


def test_in_package_derives_the_conventional_references() -> None:
    """A registration states only what is not conventional: the name, env class, bank
    and grader follow from the package and the id; relative references are absolute."""
    from forgegym.envs.bugfix.bank import BugfixTaskBank
    from forgegym.envs.bugfix.env import BugfixEnv
    from forgegym.envs.bugfix.grader import BugfixGrader

    family = Family.in_package("forgegym.envs.bugfix", "ForgeTest/Bugfix-v9")
    assert (family.name, family.env_ids) == ("bugfix", ("ForgeTest/Bugfix-v9",))
    assert family.env_class == "forgegym.envs.bugfix.env:BugfixEnv"
    assert family.env_cls is BugfixEnv and family.grader_factory() is BugfixGrader
    assert family.task_bank is None  # found by convention when the bank is made
    assert type(family.make_task_bank()) is BugfixTaskBank
    relative = Family.in_package(
        "forgegym.envs.bugfix",
        "ForgeTest/Other-v0",
        name="other",
        task_bank=".bank:BugfixTaskBank",
        scanners={"x": ".scan:scan_submission"},
    )
    assert relative.env_class == "forgegym.envs.bugfix.env:OtherEnv"
    assert relative.task_bank == "forgegym.envs.bugfix.bank:BugfixTaskBank"
    assert relative.scanners == {"x": "forgegym.envs.bugfix.scan:scan_submission"}
    with pytest.raises(ValueError, match="relative"):
        Family(name="x", envs=("X/Y-v0",), env_class=GuessEnv, task_bank=".bank:B")


def test_unregister_removes_the_ids() -> None:
    extra = Family(
        name="guess_extra", envs=(EnvSpec("ForgeTest/GuessExtra-v0"),), env_class=GuessEnv
    )
    register_family(extra)
    assert "ForgeTest/GuessExtra-v0" in gym.registry
    unregister_family("guess_extra")
    assert "ForgeTest/GuessExtra-v0" not in gym.registry
    assert "ForgeTest/GuessExtra-v0" not in forgegym.env_ids()


# ------------------------------------------------------------ generic tools
def test_cli_list_shows_the_toy_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["list", "--json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows[TOY_ID] == {
        "id": TOY_ID,
        "family": "guess",
        "levels": [1, 2],
        "tasks": 100,
        "policies": ["noop", "random", "reference", "partial", "llm", "hack:absurd_answer"],
        "hacks": ["absurd_answer"],
    }


def test_cli_eval_runs_reference_partial_and_hack(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    argv = ["eval", "--env", TOY_ID, "--episodes", "3", "--quiet", "--out", str(out)]
    for policy in ("noop", "reference", "partial", "hack:absurd_answer"):
        argv += ["--policy", policy]
    assert cli_main(argv) == 0
    episodes = json.loads(out.read_text())["episodes"]
    score = {
        p: np.mean([e["score"] for e in episodes if e["policy"] == p])
        for p in ("noop", "reference", "partial", "hack:absurd_answer")
    }
    assert score["reference"] == 1.0 > score["partial"] > score["noop"] == 0.0
    assert score["hack:absurd_answer"] == 0.0


def test_cli_bench_of_a_family_without_one_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli_main(["bench", "--env", TOY_ID]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert "registers no grading benchmark" in err and "Forge/Bugfix-v0" in err


def test_cli_tasks_verify_checks_every_hack(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["tasks", "verify", "--env", TOY_ID, "--limit", "6", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["family"] == "guess" and summary["checked"] == summary["valid"] == 6
    assert summary["bank_size"] == 100 and summary["categories"] == {"d1": 50, "d2": 50}
    assert summary["hack_success_rate"] == {"absurd_answer": 0.0}
    assert summary["reference_success_rate"] == 1.0 and summary["noop_mean_score"] == 0.0


def test_make_vec_async_returns_real_observations() -> None:
    envs = gym.make_vec(TOY_ID, num_envs=2, vectorization_mode="async")
    try:
        observations, infos = envs.reset(seed=0)
        assert all("Guess the number" in o for o in observations)
        _, rewards, terminated, _, infos = envs.step([_answer(0), '{"action": "submit"}'])
        assert terminated.all() and list(infos["family"]) == ["guess", "guess"]
    finally:
        envs.close()


def test_make_reward_funcs_grade_like_a_single_step() -> None:
    from forgegym.integrations.trl import make_reward_funcs

    (reward_fn,) = make_reward_funcs(TOY_ID)
    task = GuessBank().get("guess/d1/3")
    target = task.hidden["target"]
    completions = [_answer(target), _answer(target // 2), "not json", _answer(10**12)]
    rewards = reward_fn(prompts=[""] * 4, completions=completions, task_id=[task.task_id] * 4)
    assert rewards[0] == 1.0 and 0.0 < rewards[1] < 1.0
    assert rewards[2] < 0.0 and rewards[3] == -1.0  # format penalty; gated hack
    assert reward_fn.__name__ == "forge_guess_reward"


def test_trl_tools_are_derived_from_the_action_models() -> None:
    from transformers.utils import get_json_schema

    from forgegym.integrations.trl import ForgeToolEnvironment

    env = ForgeToolEnvironment(TOY_ID)
    tools = sorted(n for n in vars(type(env)) if not n.startswith("_"))
    assert tools == ["answer", "hint", "submit"]
    schema = get_json_schema(type(env).answer)["function"]
    assert schema["description"] == "Give your final answer; ends the episode."
    assert schema["parameters"]["required"] == ["value"]
    assert schema["parameters"]["properties"]["value"] == {
        "type": "integer",
        "description": "Your answer: the target number.",
    }
    target = GuessBank().get("guess/d2/5").hidden["target"]
    env.reset(task_id="guess/d2/5")
    assert "True" in env.hint(target - 1)
    assert "answered" in env.answer(value=target, confidence=0.9)
    assert env.get_reward() == 1.0
    env.reset(task_id="guess/d2/5")
    assert "TOOL ERROR" in env.answer()  # a missing argument is reported, not raised
    assert env.get_reward() == 0.0  # unfinished: ended with `submit`


def _named_references(text: str) -> list[str]:
    """Every ``"forgegym.<module>:<attr>"`` reference quoted in ``text``."""
    import re

    return sorted(set(re.findall(r'"(forgegym(?:\.\w+)+:[\w.]+)"', text)))


def test_registration_example_names_only_real_objects() -> None:
    # The contract's example in ``forgegym.family``'s docstring quotes lazy references;
    # the README's example (objects, no strings) is run as it is by tests/test_readme.py.
    import forgegym.family as family_module
    from forgegym.family import resolve

    text = family_module.__doc__ or ""
    references = _named_references(text)
    assert len(references) >= 8, references  # the example is there and quotes them
    missing = []
    for ref in references:
        try:
            resolve(ref)
        except (ImportError, AttributeError) as exc:
            missing.append(f"{ref}: {exc}")
    assert not missing, missing


def test_the_default_reference_restores_a_long_file_by_one_search_replace() -> None:
    # pyparsing's core.py (262 KB) as whole content was over the env's action cap, so
    # `tasks verify` read its reference as an unparseable action.
    from forgegym.family.spec import REFERENCE_CONTENT_MAX, default_reference_action

    body = "".join(f"def f{i}():\n    return {i % 7}\n\n" for i in range(4000))
    assert len(body) > REFERENCE_CONTENT_MAX
    fixed = body.replace("def f1234():\n    return 2\n", "def f1234():\n    return 3\n")
    task = Task(
        task_id="long/0",
        family="bugfix",
        difficulty=1,
        title="t",
        description="d",
        files={"m.py": fixed.replace("return 3\n", "return -3\n", 1), "small.py": "x = 1\n"},
        reference={"m.py": fixed, "small.py": "x = 2\n"},
        editable_files=["m.py", "small.py"],
    )
    text = default_reference_action(task)
    assert len(text) < 1000
    edits = json.loads(text.split("```json\n")[1].split("\n```")[0])[0]["edits"]
    files = dict(task.files)
    for edit in edits:
        if "content" in edit:
            files[edit["path"]] = edit["content"]
        else:
            assert files[edit["path"]].count(edit["search"]) == 1
            files[edit["path"]] = files[edit["path"]].replace(edit["search"], edit["replace"])
    assert files == task.reference
