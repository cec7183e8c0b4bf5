"""The environment contract, held by every registered family (one suite, no copies).

Modelled on Gymnasium's ``tests/envs/test_envs.py``: every test is parametrised over
:func:`forgegym.family.families`, so a new family is checked by registering it.
Family folders keep only tests of what is specific to them.

At the top level, not under a package's folder: it holds every registered family (and
so every layer a family uses) to one contract; no one module of ``src/forgegym`` owns it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forgegym.core.actions import ActionSet
from forgegym.core.env import ForgeEnv
from forgegym.family import Family, families, get_family
from forgegym.policies import NOOP_ACTION
from forgegym.policies.verify import verify_tasks

FAMILIES = [pytest.param(f, id=f.name) for f in families()]
IDS = [pytest.param(i, id=i) for f in families() for i in f.env_ids]
#: Tasks per family on which the reward ordering is checked.
SAMPLE = 2


def _make(env_id: str, **kwargs: Any) -> Any:
    return gym.make(env_id, **kwargs)


# ----------------------------------------------------------------- Gymnasium API
@pytest.mark.parametrize("env_id", IDS)
def test_check_env(env_id: str) -> None:
    env = _make(env_id)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_steps": 0}, "max_steps"),
        ({"max_steps": 2.5}, "max_steps"),
        ({"difficulty": 99}, "difficulty"),
        ({"format_penalty": 3}, "format_penalty"),
        ({"render_mode": "rgb_array"}, "render_mode"),
        ({"optimised_grading": "yes"}, "optimised_grading"),
    ],
)
def test_bad_make_arguments_raise_value_error_naming_them(
    env_id: str, kwargs: dict[str, Any], name: str
) -> None:
    with pytest.raises(ValueError, match=name):
        _make(env_id, **kwargs)


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_first_observation(env_id: str) -> None:
    env = _make(env_id)
    try:
        first, info_a = env.reset(seed=11)
        second, info_b = env.reset(seed=11)
        assert first == second and info_a["task_id"] == info_b["task_id"]
        for key in ("task_id", "family", "difficulty", "step", "max_steps", "messages"):
            assert key in info_a, key
    finally:
        env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_step_never_raises_and_errors_reach_the_observation(env_id: str) -> None:
    env = _make(env_id, max_steps=50)
    env.reset(seed=0)

    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        st.one_of(
            st.text(max_size=300),
            st.sampled_from(
                [
                    "",
                    "{",
                    '{"action": "edit"}',
                    '{"action": "edit", "edits": [{"path": "../../etc/passwd", "content": "x"}]}',
                    '{"action": "run_tests", "tests": ["nope::nope"]}',
                    '[{"action": "plan", "text": 1}]',
                    "```json\n[]\n```",
                    '{"action": null}',
                    '{"action": "' + "x" * 5000 + '"}',
                    "[" * 10_000,
                ]
            ),
        )
    )
    def fuzz(text: str) -> None:
        observation, reward, terminated, truncated, info = env.step(text)
        assert isinstance(observation, str) and isinstance(reward, float)
        assert env.observation_space.contains(observation)
        error = info.get("action_error")
        if error is not None:
            assert error in observation
        if terminated or truncated:
            env.reset(seed=0)

    try:
        fuzz()
    finally:
        env.close()


# ------------------------------------------------------------------ the family
@pytest.mark.parametrize("family", FAMILIES)
def test_the_action_protocol_matches_the_action_models(family: Family) -> None:
    env = _make(family.env_ids[0])
    try:
        base = env.unwrapped
        assert isinstance(base, ForgeEnv) and base.family == family.name
        assert tuple(base.action_set.models) == family.actions()
        observation, info = env.reset(seed=0)
        assert info["action_schema"] == ActionSet(family.actions()).json_schema()
        # Navigation is shown where there is something to navigate: an observation that
        # shows every file whole (every built-in task) is unchanged by it.
        navigation = {"list", "read", "search"} if "## Repository map" not in observation else set()
        for name in base.action_set.names:
            if name not in navigation:
                assert name in observation, f"action {name!r} is not shown in the observation"
    finally:
        env.close()


def _secrets(task: Any) -> set[str]:
    """String leaves of ``task.hidden`` (12+ characters) that the visible task lacks."""
    visible = json.dumps(task.files) + task.description + task.title + task.task_id
    found: set[str] = set()
    stack: list[Any] = [task.hidden]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif (
            isinstance(value, str)
            and len(value.strip()) >= 12
            and value not in visible
            and value.partition("::")[0] not in task.files  # not a visible file's test id
        ):
            found.add(value)
    return found


@pytest.mark.parametrize("family", FAMILIES)
def test_hidden_data_never_reaches_the_agent(family: Family) -> None:
    env = _make(family.env_ids[0])
    try:
        for task_id in env.unwrapped.task_bank.task_ids(3, seed=4):
            observation, info = env.reset(options={"task_id": task_id})
            task = env.unwrapped.task
            shown = observation + json.dumps(info, default=str)
            workspace = getattr(env.unwrapped, "workspace", None)
            if workspace is not None:
                root = Path(workspace.root)
                shown += "".join(
                    p.read_text(errors="replace") for p in sorted(root.rglob("*")) if p.is_file()
                )
            for secret in _secrets(task):
                assert secret not in shown, (task_id, secret[:80])
    finally:
        env.close()


# --------------------------------------------------------- reward ordering
def _sample(family: Family) -> tuple[list[str], str | None]:
    """``SAMPLE`` task ids, and one id where the family's partial applies (if any)."""
    bank = family.make_task_bank()
    ids = list(bank.task_ids(SAMPLE, seed=0))
    partial = family.partial_action()
    with_partial = None
    if partial is not None:
        with_partial = next(
            (t for t in bank.task_ids(200, seed=1) if partial(bank.get(t)) is not None), None
        )
    return ids, with_partial


def _completions(family: Family, task: Any) -> tuple[list[str], list[str]]:
    """Labels and completions graded on ``task``: reference, no-op, partial, hacks."""
    labels = ["reference", "noop"]
    texts = [family.reference_action()(task), NOOP_ACTION]
    partial_fn = family.partial_action()
    partial = partial_fn(task) if partial_fn is not None else None
    if partial is not None:
        labels.append("partial")
        texts.append(partial)
    hacks = family.hack_actions()
    labels += [f"hack:{h}" for h in hacks]
    texts += [fn(task) or NOOP_ACTION for fn in hacks.values()]
    return labels, texts


def _grade_sample(family: Family) -> dict[str, Any]:
    """Per task of the family's sample: reward, breakdown and verdict of the reference,
    partial, no-op and hacks, graded on the default (optimised) grading path."""
    env = _make(family.env_ids[0], max_steps=1).unwrapped
    try:
        assert env.optimised_grading
        ids, with_partial = _sample(family)
        per_task: dict[str, Any] = {}
        for task_id in dict.fromkeys([*ids, *([with_partial] if with_partial else [])]):
            labels, texts = _completions(family, env.task_bank.get(task_id))
            results = env.grade_completions(task_id, texts)
            per_task[task_id] = {
                label: (reward, breakdown, env.solved(breakdown))
                for label, (reward, breakdown) in zip(labels, results, strict=True)
            }
        return per_task
    finally:
        env.close()


class _GradedSamples(dict[str, dict[str, Any]]):
    """Family name -> :func:`_grade_sample`, graded the first time a test asks for it:
    a run that selects one family's tests (the fast tier's) grades only that family."""

    def __missing__(self, name: str) -> dict[str, Any]:
        self[name] = _grade_sample(get_family(name))
        return self[name]


@pytest.fixture(scope="module")
def graded() -> dict[str, dict[str, Any]]:
    """Per family (graded once per module, on first use) and task: rewards/breakdowns of
    reference, partial, no-op and hacks on the default (optimised) grading path."""
    return _GradedSamples()


@pytest.mark.parametrize("family", FAMILIES)
def test_reference_beats_partial_beats_noop_and_no_hack_beats_noop(
    family: Family, graded: dict[str, dict[str, Any]]
) -> None:
    per_task = graded[family.name]
    assert per_task
    for task_id, results in per_task.items():
        ref_reward, ref, ref_solved = results["reference"]
        noop_reward, noop, noop_solved = results["noop"]
        assert ref_solved and not noop_solved, (task_id, ref.render(), noop.render())
        assert ref_reward > noop_reward, task_id
        if "partial" in results:
            partial_reward, partial, partial_solved = results["partial"]
            assert ref_reward > partial_reward > noop_reward, (task_id, partial.render())
            assert not partial_solved, task_id
        for label, (reward, breakdown, solved) in results.items():
            if label.startswith("hack:"):
                assert reward <= noop_reward + 1e-9, (task_id, label, breakdown.render())
                assert breakdown.score <= noop.score + 1e-9, (task_id, label)
                assert not solved, (task_id, label)


@pytest.mark.parametrize("family", FAMILIES)
def test_family_solved_predicate_is_the_envs(
    family: Family, graded: dict[str, dict[str, Any]]
) -> None:
    for results in graded[family.name].values():
        for _, breakdown, solved in results.values():
            assert family.is_solved(breakdown) == solved


#: Families graded by measured time (a minute of grading here on 2 cores) are slow.
SLOW_FAMILIES = [
    pytest.param(f, id=f.name, marks=[pytest.mark.slow] if f.reward_tolerance else [])
    for f in families()
]


@pytest.mark.parametrize("family", SLOW_FAMILIES)
def test_reference_grading_path_gives_the_same_rewards(
    family: Family, graded: dict[str, dict[str, Any]]
) -> None:
    """``optimised_grading=False`` is accepted by every family and grades the sample as
    the default (optimised) path does: same rewards, breakdowns and verdicts. A group
    with repeats (as GRPO's are) across every task, through ``grade_batch`` (what the
    TRL reward functions call), agrees too."""
    per_task = graded[family.name]
    slow = _make(family.env_ids[0], max_steps=1, optimised_grading=False).unwrapped
    fast = _make(family.env_ids[0], max_steps=1).unwrapped
    tolerance = family.reward_tolerance
    try:
        assert not slow.optimised_grading and fast.optimised_grading
        items: list[tuple[str, str, str]] = []
        for task_id, results in per_task.items():
            labels, texts = _completions(family, slow.task_bank.get(task_id))
            assert labels == list(results)
            reference = slow.grade_completions(task_id, texts)
            for label, (reward, breakdown) in zip(labels, reference, strict=True):
                fast_reward, fast_breakdown, fast_solved = results[label]
                assert sorted(breakdown.gates) == sorted(fast_breakdown.gates), (task_id, label)
                if tolerance == 0.0:
                    assert slow.solved(breakdown) == fast_solved, (task_id, label)
                    assert reward == fast_reward, (task_id, label)
                    assert breakdown.model_dump() == fast_breakdown.model_dump(), (task_id, label)
                elif label in ("reference", "noop"):
                    # Timed: a partial or hack near a timing threshold may land on either
                    # side on a loaded machine; the fix and the no-op may not.
                    assert slow.solved(breakdown) == fast_solved, (task_id, label)
                    assert reward == pytest.approx(fast_reward, abs=tolerance), (task_id, label)
            items += [(task_id, label, text) for label, text in zip(labels, texts, strict=True)]
        if tolerance == 0.0:  # a timed family's repeat grading is what the tolerance covers
            repeated = items[:2] * 3 + items  # repeats, across tasks, in one batch
            batch = fast.grade_batch([(task_id, text) for task_id, _, text in repeated])
            for (task_id, label, _), (reward, breakdown) in zip(repeated, batch, strict=True):
                assert reward == per_task[task_id][label][0], (task_id, label)
                assert breakdown.model_dump() == per_task[task_id][label][1].model_dump()
    finally:
        slow.close()
        fast.close()


_FRESH = """
import json, sys
import gymnasium as gym
from forgegym.family import get_family
from forgegym.policies import NOOP_ACTION
family = get_family(sys.argv[1])
env = gym.make(family.env_ids[0], max_steps=1).unwrapped
task = env.task_bank.get(sys.argv[2])
texts = [family.reference_action()(task), NOOP_ACTION]
graded = env.grade_completions(task.task_id, texts)
print("RESULT" + json.dumps([[r, env.solved(b), sorted(b.gates)] for r, b in graded]))
env.close()
"""


def _fresh_processes(family: Family, task_id: str, count: int) -> list[str]:
    """The stdout of ``count`` fresh interpreters grading ``task_id`` (:data:`_FRESH`):
    started together (two cores) unless the family's rewards are timed, where a
    neighbour's load would be part of what is measured."""
    command = [sys.executable, "-c", _FRESH, family.name, task_id]
    outputs: list[str] = []
    if family.reward_tolerance:  # one after the other
        for _ in range(count):
            run = subprocess.run(command, capture_output=True, text=True, timeout=600)
            assert run.returncode == 0, run.stderr[-2000:]
            outputs.append(run.stdout)
        return outputs
    started = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(count)
    ]
    for proc in started:
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr[-2000:]
        outputs.append(stdout)
    return outputs


@pytest.mark.parametrize("family", FAMILIES)
def test_identical_rewards_across_fresh_processes(
    family: Family, graded: dict[str, dict[str, Any]]
) -> None:
    task_id, results = next(iter(graded[family.name].items()))
    expected = [results["reference"][0], results["noop"][0]]
    tolerance = family.reward_tolerance
    for stdout in _fresh_processes(family, task_id, 2):
        line = [ln for ln in stdout.splitlines() if ln.startswith("RESULT")][-1]
        fresh = json.loads(line[len("RESULT") :])
        rewards = [reward for reward, _, _ in fresh]
        if tolerance == 0.0:
            assert rewards == expected
        else:
            assert rewards == pytest.approx(expected, abs=tolerance)
        assert [solved for _, solved, _ in fresh] == [
            results["reference"][2],
            results["noop"][2],
        ]


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("family", FAMILIES)
def test_verify_validates_a_task(family: Family) -> None:
    summary = verify_tasks(family.env_ids[0], limit=1, seed=3)
    assert summary.family == family.name
    assert summary.checked == summary.valid == 1, summary.invalid
    assert set(summary.hack_success_rate) == set(family.hack_actions())
    assert not any(summary.hack_success_rate.values())
    assert summary.categories == family.statistics(family.make_task_bank())


@pytest.mark.parametrize("family", FAMILIES)
def test_reset_options_replay_a_task_and_reject_unknown_ones(family: Family) -> None:
    env = _make(family.env_ids[0])
    try:
        task_id = env.unwrapped.task_bank.task_ids(1, seed=9)[0]
        _, info = env.reset(options={"task_id": task_id})
        assert info["task_id"] == task_id
        with pytest.raises(ValueError, match="task_id"):
            env.reset(options={"task_id": f"{family.name}/no/such/task"})
        with pytest.raises(ValueError, match="options"):
            env.reset(options={"bogus": 1})
        levels = env.unwrapped.task_bank.difficulty_levels
        _, info = env.reset(seed=1, options={"difficulty": levels[-1]})
        assert info["difficulty"] == levels[-1]
        assert np.isfinite(float(info["step"]))
    finally:
        env.close()


@pytest.mark.parametrize("family", FAMILIES)
def test_every_bank_has_one_api(family: Family) -> None:
    """One task-bank API across families: ``ids()`` is a method (per level too),
    ``len`` counts it, every listed id is served, ``task_ids`` and ``sample`` stay within
    it, and ids served beyond it (``extra_ids``, e.g. a documented seed task) are gettable."""
    from forgegym.core.task import UnknownTaskError

    bank = family.make_task_bank()
    assert callable(bank.ids), f"{family.name}: ids must be a method"
    ids = list(bank.ids())
    assert ids and len(ids) == len(set(ids))
    if hasattr(bank, "__len__"):
        assert len(bank) == len(ids)
    per_level = [i for level in bank.difficulty_levels for i in bank.ids(level)]
    assert sorted(per_level) == sorted(ids)
    chosen = list(bank.task_ids(3, seed=1))
    assert chosen == list(bank.task_ids(3, seed=1)) and set(chosen) <= set(ids)
    assert bank.get(chosen[0]).task_id == chosen[0]
    drawn = bank.sample(np.random.default_rng(0))
    assert drawn.task_id in set(ids)
    for extra in getattr(bank, "extra_ids", ()):
        assert extra not in set(ids) and bank.get(extra).task_id == extra
    with pytest.raises(UnknownTaskError):
        bank.get("no/such/task")


@pytest.mark.parametrize("family", FAMILIES)
def test_reward_breakdown_in_info_is_the_model_dumped(family: Family) -> None:
    """``info["reward_breakdown"]`` is plain JSON that validates back into the model."""
    from forgegym.rewards import RewardBreakdown

    env = _make(family.envs[0].env_id)
    try:
        env.reset(seed=0)
        *_, info = env.step(NOOP_ACTION)
        dumped = info["reward_breakdown"]
        assert isinstance(dumped, dict)
        json.dumps(dumped)  # plain JSON
        model = RewardBreakdown.model_validate(dumped)
        assert model.total == pytest.approx(dumped["total"]) and model.score == info["score"]
    finally:
        env.close()
