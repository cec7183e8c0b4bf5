"""pass@k estimator, scheduler and wrapper."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from math import comb

import numpy as np
import pytest
from pydantic import ValidationError
from toy_forge import ToyBank, ToyEnv, solve_action

from forgegym.curricula import (
    CurriculumConfig,
    CurriculumScheduler,
    PassAtKCurriculum,
    beta_expected_pass_at_k,
    beta_expected_passk_slope,
    beta_expected_variance,
    pass_at_k,
)


# ------------------------------------------------------------------ estimator
def test_pass_at_k_matches_binomial_formula_on_grid() -> None:
    for n in range(1, 21):
        for c, k in itertools.product(range(n + 1), range(1, n + 1)):
            exact = 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)
            assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12), (n, c, k)


def test_pass_at_k_edge_cases() -> None:
    assert pass_at_k(10, 8, 3) == 1.0  # n - c = 2 < k
    assert pass_at_k(10, 0, 3) == 0.0
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    # Large n stays finite and exact enough (binomials would overflow a float).
    assert pass_at_k(2000, 10, 100) == pytest.approx(1 - comb(1990, 100) / comb(2000, 100))


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((0, 0, 1), "n"),
        ((5, -1, 1), "c"),
        ((5, 6, 1), "c"),
        ((5, 1, 0), "k"),
        ((5, 1, 6), "k"),
        ((5.0, 1, 1), "n"),
        ((True, 1, 1), "n"),
    ],
)
def test_pass_at_k_validates(args: tuple, name: str) -> None:
    with pytest.raises(ValueError, match=f"^{name} "):
        pass_at_k(*args)


def test_beta_moments_match_monte_carlo() -> None:
    rng = np.random.default_rng(0)
    a, b, k = 2.5, 4.0, 5
    p = rng.beta(a, b, size=400_000)
    assert beta_expected_pass_at_k(a, b, k) == pytest.approx(np.mean(1 - (1 - p) ** k), abs=3e-3)
    assert beta_expected_variance(a, b) == pytest.approx(np.mean(p * (1 - p)), abs=2e-3)
    assert beta_expected_passk_slope(a, b, k) == pytest.approx(
        np.mean(k * p * (1 - p) ** k), abs=3e-3
    )


def test_passk_slope_peaks_near_one_over_k_plus_one() -> None:
    # With a sharp posterior the slope is maximal at p = 1/(k+1), below 0.20 for k = 8.
    k = 8
    grid = np.linspace(0.01, 0.99, 99)
    slopes = [beta_expected_passk_slope(1000 * p, 1000 * (1 - p), k) for p in grid]
    assert grid[int(np.argmax(slopes))] == pytest.approx(1 / (k + 1), abs=0.015)


# ------------------------------------------------------------------ config
def test_config_is_frozen_and_validated() -> None:
    config = CurriculumConfig()
    with pytest.raises(ValidationError):
        config.k = 3  # type: ignore[misc]
    with pytest.raises(ValidationError, match="too_hard"):
        CurriculumConfig(too_easy=0.3, too_hard=0.5)
    with pytest.raises(ValidationError):
        CurriculumConfig(k=0)
    with pytest.raises(ValidationError):
        CurriculumConfig(unknown_field=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="difficulty"):
        CurriculumScheduler(ToyBank(), {"difficulty": 7})


# ------------------------------------------------------------------ scheduler
def test_tiers_follow_pass_at_k() -> None:
    sched = CurriculumScheduler(ToyBank(), {"k": 4, "min_trials": 4})
    easy, hard, mid, fresh = sched.add_tasks(["toy/d0/1", "toy/d0/2", "toy/d0/3", "toy/d0/4"])
    sched.record(easy, 8, 8)
    sched.record(hard, 0, 20)
    sched.record(mid, 2, 10)  # p ~ 0.25 -> pass@4 ~ 0.65: learnable although p < 0.20 floor-ish
    assert sched.tier(easy) == "too_easy"
    assert sched.tier(hard) == "too_hard"
    assert sched.tier(mid) == "learnable"
    assert sched.tier(fresh) == "learnable"
    assert sched.tier_sizes() == {"too_easy": 1, "learnable": 2, "too_hard": 1}


def test_default_tiers_keep_the_tasks_that_give_grpo_signal() -> None:
    # The default band (k = 3): a task that passed half of its first GRPO group is the
    # best there is and stays; one that passed 6 of 8 will be solved for good soon (the
    # policy only gets better) and retires; a hard one (1 of 8) is next and stays.
    sched = CurriculumScheduler(ToyBank())
    half, most, hard = sched.add_tasks(["toy/d0/1", "toy/d0/2", "toy/d0/3"])
    sched.record(half, 4, 8)
    sched.record(most, 6, 8)
    sched.record(hard, 1, 8)
    assert sched.tier(half) == "learnable"
    assert sched.tier(most) == "too_easy"
    assert sched.tier(hard) == "learnable"
    # Under k = 4 with the same thresholds the half-solved task would already retire.
    k4 = CurriculumScheduler(ToyBank(), {"k": 4})
    k4.record(half, 4, 8)
    assert k4.tier(half) == "too_easy"


def test_low_p_task_is_learnable_for_large_k() -> None:
    # p ~ 0.1 is under a 0.20 floor on p, but pass@8 ~ 0.55: the tiers are on pass@k.
    sched = CurriculumScheduler(ToyBank(), {"k": 8})
    (tid,) = sched.add_tasks(["toy/d0/9"])
    sched.record(tid, 4, 40)
    assert sched.tier(tid) == "learnable"
    sched1 = CurriculumScheduler(ToyBank(), {"k": 1})
    sched1.add_tasks([tid])
    sched1.record(tid, 4, 40)
    assert sched1.tier(tid) == "too_hard"


def test_sampling_prefers_learnable_and_skips_retired() -> None:
    sched = CurriculumScheduler(
        ToyBank(), {"k": 1, "retired_fraction": 0.0, "min_learnable": 1, "seed": 1}
    )
    good, easy = sched.add_tasks(["toy/d0/1", "toy/d0/2"])
    sched.record(good, 5, 10)
    sched.record(easy, 10, 10)
    assert sched.tier(easy) == "too_easy"
    draws = Counter(sched.next_task() for _ in range(200))
    assert easy not in draws
    # Besides the known learnable task, only untried tasks from the frontier compete.
    others = set(draws) - {good}
    assert draws[good] > 0 and others
    assert all(sched._tasks[t].trials == 0 for t in others)


def test_learnability_weighting() -> None:
    sched = CurriculumScheduler(
        ToyBank(),
        {
            "k": 2,
            "retired_fraction": 0.0,
            "min_learnable": 1,
            "seed": 3,
            "staleness_weight": 0.0,
            "promising_ratio": 0.0,
        },
    )
    half, rare = sched.add_tasks(["toy/d0/1", "toy/d0/2"])
    sched.record(half, 10, 20)  # E[p(1-p)] ~ 0.24
    sched.record(rare, 2, 20)  # p ~ 0.14, pass@2 ~ 0.27: learnable, lower variance
    counts = Counter(sched.next_task() for _ in range(2000))
    assert counts[half] > 1.5 * counts[rare] > 0
    # By default a task less learnable than a new one from the frontier is not drawn.
    sched = CurriculumScheduler(
        ToyBank(), {"k": 2, "retired_fraction": 0.0, "min_learnable": 1, "seed": 3}
    )
    sched.record(half, 10, 20)
    sched.record(rare, 2, 20)
    assert sched.learnability(rare) < sched.learnability(half)
    counts = Counter(sched.next_task() for _ in range(300))
    assert counts[half] > 0 and counts[rare] == 0


def test_replenishes_from_bank_with_growing_seeds_and_levels() -> None:
    sched = CurriculumScheduler(ToyBank(), {"min_learnable": 4, "replenish_batch": 6})
    first = sched.next_task()
    assert len(sched) == 6 and first in sched
    assert sched.current_level() == 0
    # Master level 0: every task there is solved -> new tasks come from level 1.
    for _ in range(5):
        for tid in list(sched.task_pool):
            if sched.tier(tid) == "learnable" and sched._tasks[tid].difficulty == 0:
                sched.record(tid, 8, 8)
        sched.next_task()
        if sched.current_level() == 1:
            break
    assert sched.current_level() == 1
    levels = {sched._tasks[t].difficulty for t in sched.task_pool}
    assert levels == {0, 1}
    assert sched.replenishments >= 2


def test_quick_retirement_of_never_and_always_solved_tasks() -> None:
    sched = CurriculumScheduler(ToyBank(), {"k": 4, "retire_after": 8})
    never, always, short, mixed = sched.add_tasks(["toy/d0/1", "toy/d0/2", "toy/d0/3", "toy/d0/4"])
    sched.record(never, 0, 8)
    sched.record(always, 8, 8)
    sched.record(short, 0, 4)  # fewer than retire_after rollouts: pass@4 ~ 0.44, still learnable
    sched.record(mixed, 1, 8)
    assert sched.tier(never) == "too_hard"  # pass@4 of Beta(1, 9) is 0.31: only the rule retires
    assert sched.pass_at_k_estimate(never) > 0.2
    assert sched.tier(always) == "too_easy"
    assert sched.tier(short) == "learnable"
    assert sched.tier(mixed) == "learnable"


def test_level_prior_is_learned_online() -> None:
    sched = CurriculumScheduler(
        ToyBank(), {"level_prior_strength": 2.0, "level_gap": 1.0, "level_horizon": 1e6}
    )
    assert sched.level_mean(0) == 0.5  # nothing known yet
    for index in range(6):
        sched.record(f"toy/d0/{index}", 6, 8)
    # Six alike tasks: their spread is all binomial noise, so the prior firms up ...
    strength = sched.prior_strength()
    assert strength > 2.0 * 5
    # (a long horizon: recency weighting barely moves it)
    assert sched.level_mean(0) == pytest.approx((36 + strength * 0.5) / (48 + strength), abs=0.01)
    # Unseen levels are predicted from the observed one through the logit gap.
    assert sched.level_mean(0) > sched.level_mean(1) > sched.level_mean(2)
    # A task's first draw starts from its level's prior, not from Beta(1, 1).
    (fresh,) = sched.add_tasks(["toy/d0/100"])
    a, b = sched.effective_posterior(fresh)
    assert a / (a + b) == pytest.approx(sched.level_mean(0))
    # Observing level 1 replaces the prior gap with the data's.
    for index in range(6):
        sched.record(f"toy/d1/{index}", 1, 8)
    assert sched.level_gap() > 1.5
    assert sched.level_mean(1) < 0.3
    # Only first groups feed the level: later draws of a chosen task are not a fair sample.
    before = sched.level_mean(0)
    sched.record("toy/d0/0", 0, 8)
    assert sched.level_mean(0) == pytest.approx(before, abs=1e-3)


def test_prior_strength_follows_the_spread_of_tasks() -> None:
    alike = CurriculumScheduler(ToyBank())
    spread = CurriculumScheduler(ToyBank())
    for index in range(12):
        alike.record(f"toy/d0/{index}", 4 + index % 2, 8)
        spread.record(f"toy/d0/{index}", 8 * (index % 2), 8)  # half never, half always
    assert alike.prior_strength() > 10.0
    assert spread.prior_strength() < 1.25  # estimate 0.3, shrunk towards 2.0 by 8 groups
    # With single-rollout records (the wrapper) the spread is unmeasurable: the config's.
    single = CurriculumScheduler(ToyBank(), {"level_prior_strength": 3.0})
    for index in range(12):
        single.record(f"toy/d0/{index}", index % 2 == 0)
    assert single.prior_strength() == 3.0


def test_new_tasks_are_judged_by_the_signal_their_level_gave() -> None:
    # Two levels with the same mean first-group success (1/2): at level 0 tasks are
    # alike (4/8 each: every group gives signal), at level 1 half are never and half
    # always solved (broken or mislabelled: no group gives signal). A long level horizon:
    # every group counts in full.
    sched = CurriculumScheduler(ToyBank(), {"seed": 0, "level_horizon": 1e6})
    for index in range(12):
        sched.record(f"toy/d0/{index}", 4, 8)
        sched.record(f"toy/d1/{index}", 8 * (index % 2), 8)
    assert sched.level_mean(0) == pytest.approx(sched.level_mean(1), abs=0.05)
    alike, bimodal = sched.fresh_learnability(0), sched.fresh_learnability(1)
    assert alike > 0.2 > 0.05 > bimodal
    assert sched.current_level() == 0
    # The variance estimate never exceeds what any task can give (p(1-p) <= 1/4).
    lucky = CurriculumScheduler(ToyBank())
    lucky.record("toy/d0/0", 4, 8)
    assert lucky.fresh_learnability(0) <= 0.25
    # With "passk_slope" learnability the level prior's prediction is used as is.
    slope = CurriculumScheduler(ToyBank(), {"learnability": "passk_slope"})
    for index in range(12):
        slope.record(f"toy/d1/{index}", 8 * (index % 2), 8)
    strength, mean = slope.prior_strength(), slope.level_mean(1)
    assert slope.fresh_learnability(1) == pytest.approx(
        beta_expected_passk_slope(strength * mean, strength * (1 - mean), slope.config.k)
    )


def test_frontier_falls_back_when_the_next_level_is_too_hard() -> None:
    sched = CurriculumScheduler(ToyBank(), {"seed": 0})
    for index in range(8):
        sched.record(f"toy/d0/{index}", 8, 8)
    assert sched.current_level() == 1  # level 0 mastered: promoted at once
    for index in range(8):
        sched.record(f"toy/d1/{index}", 0, 8)
    for index in range(8, 12):
        sched.record(f"toy/d0/{index}", 6, 8)
    assert sched.current_level() == 0


def test_learning_progress_raises_weight() -> None:
    config = {
        "k": 1,
        "retired_fraction": 0.0,
        "min_learnable": 1,
        "seed": 0,
        "staleness_weight": 0.0,
        "progress_weight": 2.0,
        "reestimate_every": 10_000,
    }
    sched = CurriculumScheduler(ToyBank(), config)
    steady, moving = sched.add_tasks(["toy/d0/1", "toy/d0/2"])
    sched.record(steady, 4, 8)
    sched.record(steady, 4, 8)
    sched.record(moving, 0, 8)
    sched.record(moving, 8, 8)  # same posterior Beta(9, 9), but its success just jumped
    assert sched.posterior(steady) == sched.posterior(moving)
    assert sched.learning_progress(steady) == 0.0
    # The EMAs start at the first rate (0): fast = 0.5 * 1, slow = 0.1 * 1.
    assert sched.learning_progress(moving) == pytest.approx(0.4)
    counts = Counter(sched.next_task() for _ in range(3000))
    assert counts[moving] > 1.5 * counts[steady] > 0


def test_reestimation_decays_evidence() -> None:
    sched = CurriculumScheduler(
        ToyBank(), {"reestimate_every": 10, "decay": 0.5, "min_trials": 4, "min_learnable": 1}
    )
    (tid,) = sched.add_tasks(["toy/d0/1"])
    sched.record(tid, 6, 6)
    assert sched.tier(tid) == "too_easy"
    other = sched.add_tasks(["toy/d0/2"])[0]
    sched.record(other, 2, 4)  # 10 rollouts -> re-estimation
    assert sched.reestimations == 1
    assert sched.posterior(tid) == pytest.approx((1 + 3.0, 1.0))
    # Still retired: decay widens the posterior, re-checks (not decay) bring tasks back.
    assert sched.tier(tid) == "too_easy"
    assert sched.timeline[-1]["event"] == "reestimate"


def test_staleness_raises_weight_of_unseen_tasks() -> None:
    config = {
        "k": 1,
        "retired_fraction": 0.0,
        "min_learnable": 1,
        "seed": 0,
        "staleness_weight": 4.0,
        "staleness_horizon": 50.0,
        "temperature": 1.0,
        "reestimate_every": 10_000,
    }
    sched = CurriculumScheduler(ToyBank(), config)
    a, b = sched.add_tasks(["toy/d0/1", "toy/d0/2"])
    sched.record(b, 5, 10)
    for _ in range(20):  # `a` gets recent attention; `b` ages
        sched.record(a, 5, 10)
    counts = Counter(sched.next_task() for _ in range(2000))
    assert counts[b] > 1.5 * counts[a] > 0


def test_state_roundtrip_and_json(tmp_path) -> None:
    sched = CurriculumScheduler(ToyBank(), {"seed": 5, "reestimate_every": 7})
    for _ in range(30):
        tid = sched.next_task()
        sched.record(tid, bool(hash(tid) % 2))
    path = sched.save(tmp_path / "state.json")
    data = json.loads(path.read_text())
    assert data["format"] == "forgegym.curriculum/1"
    assert {"tasks", "history", "timeline", "tier_sizes", "config"} <= data.keys()
    some = next(iter(data["tasks"].values()))
    assert {"alpha", "beta", "tier", "history", "difficulty"} <= some.keys()
    assert data["history"][-1]["episode"] == 30
    restored = CurriculumScheduler.load(path, ToyBank())
    assert restored.state_dict() == sched.state_dict()
    # Same rng state -> same next choices.
    assert [restored.next_task() for _ in range(10)] == [sched.next_task() for _ in range(10)]
    with pytest.raises(ValueError, match="format"):
        restored.load_state_dict({"format": "nope"})


def _drive(sched: CurriculumScheduler, steps: int, rng: np.random.Generator) -> list:
    """Draw and record ``steps`` groups of 8 with a level-dependent success rate."""
    seen = []
    for _ in range(steps):
        tid = sched.next_task()
        successes = int(rng.binomial(8, (0.8, 0.45, 0.15)[sched._tasks[tid].difficulty]))
        sched.record(tid, successes, 8)
        seen.append((tid, successes))
    return seen


def test_save_and_load_mid_run_changes_nothing(tmp_path) -> None:
    config = {"seed": 3, "reestimate_every": 64, "replenish_batch": 5}
    straight = CurriculumScheduler(ToyBank(), config)
    full = _drive(straight, 160, np.random.default_rng(0))
    first = CurriculumScheduler(ToyBank(), config)
    rng = np.random.default_rng(0)
    head = _drive(first, 80, rng)
    path = first.save(tmp_path / "mid.json")
    resumed = CurriculumScheduler.load(path, ToyBank())
    assert resumed.state_dict() == first.state_dict()
    tail = _drive(resumed, 80, rng)
    assert head + tail == full
    assert resumed.state_dict() == straight.state_dict()
    assert resumed.level_mean(1) == straight.level_mean(1)


def test_state_file_plots_with_the_cli(tmp_path) -> None:
    from forgegym.cli import main as cli

    sched = CurriculumScheduler(ToyBank(), {"seed": 1, "reestimate_every": 64})
    _drive(sched, 120, np.random.default_rng(1))
    assert {t["event"] for t in sched.timeline} == {"replenish", "reestimate"}
    state = sched.save(tmp_path / "state.json")
    out = tmp_path / "curve.png"
    assert cli(["plot", "curriculum", str(state), "-o", str(out)]) == 0
    import matplotlib.image as mpimg

    image = mpimg.imread(out)
    assert image.ndim == 3 and len(np.unique(image[..., :3].reshape(-1, 3), axis=0)) > 50


def test_loads_state_files_of_the_previous_version(tmp_path) -> None:
    sched = CurriculumScheduler(ToyBank(), {"seed": 2})
    _drive(sched, 20, np.random.default_rng(2))
    old = sched.state_dict()
    old["config"]["promising_ratio"] = 1.0  # a removed setting
    del old["levels"]
    for task in old["tasks"].values():
        del task["fast"], task["slow"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    restored = CurriculumScheduler.load(path, ToyBank())
    assert restored.episode == sched.episode and len(restored) == len(sched)
    restored.next_task()


def test_stats_and_record_validation() -> None:
    sched = CurriculumScheduler(ToyBank())
    tid = sched.next_task()
    sched.record(tid, 3, 8)
    stats = sched.stats()
    assert stats["episode"] == 8 and stats["pool"] == len(sched)
    assert stats["too_easy"] + stats["learnable"] + stats["too_hard"] == stats["pool"]
    assert stats["mean_pass_at_k"] is not None and 0 <= stats["mean_pass_at_k"] <= 1
    with pytest.raises(ValueError, match="successes"):
        sched.record(tid, 9, 8)
    with pytest.raises(ValueError, match="trials"):
        sched.record(tid, 0, 0)
    sched.record_many([(tid, True), (tid, False), ("toy/d1/3", True)])
    assert "toy/d1/3" in sched and sched._tasks["toy/d1/3"].difficulty == 1


# ------------------------------------------------------------------ wrapper
def test_wrapper_picks_tasks_and_records_success(tmp_path) -> None:
    env = PassAtKCurriculum(ToyEnv(max_steps=1), config={"seed": 2, "k": 2})
    try:
        for episode in range(6):
            obs, info = env.reset(seed=episode)
            tid = info["task_id"]
            assert tid in env.scheduler
            assert "curriculum" in info
            action = solve_action(tid) if episode % 2 == 0 else '{"action": "submit"}'
            _, reward, terminated, truncated, info = env.step(action)
            assert terminated or truncated
            assert info["success"] is (episode % 2 == 0)
            assert reward == (1.0 if episode % 2 == 0 else 0.0)
        assert env.episodes == 6 and env.scheduler.episode == 6
        assert [h["success"] for h in env.history] == [1.0, 0.0] * 3
        assert {
            "episode",
            "task_id",
            "success",
            "difficulty",
            "too_easy",
            "learnable",
            "too_hard",
        } <= (env.history[0].keys())
        # An explicit task_id wins and is still recorded.
        _, info = env.reset(options={"task_id": "toy/d2/7"})
        assert info["task_id"] == "toy/d2/7"
        env.step(solve_action("toy/d2/7"))
        assert env.scheduler._tasks["toy/d2/7"].trials == 1
        env.save(tmp_path / "s.json")
        assert json.loads((tmp_path / "s.json").read_text())["episode"] == 7
    finally:
        env.close()


def test_wrapper_records_on_truncation_once() -> None:
    env = PassAtKCurriculum(ToyEnv(max_steps=2), config={"seed": 0})
    try:
        env.reset()
        _, _, terminated, truncated, _ = env.step('{"action": "plan", "text": "think"}')
        assert not (terminated or truncated)
        _, _, _, truncated, info = env.step('{"action": "plan", "text": "again"}')
        assert truncated and info["success"] is False
        env.step('{"action": "submit"}')  # a finished env: not recorded twice
        assert env.scheduler.episode == 1
    finally:
        env.close()


def test_wrapper_requires_task_bank() -> None:
    import gymnasium as gym

    with pytest.raises(ValueError, match="task_bank"):
        PassAtKCurriculum(gym.make("CartPole-v1"))
    assert math.isfinite(pass_at_k(3, 1, 1))
