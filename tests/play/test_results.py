"""The episode schema (forgegym.play.results): one format for eval and rollouts, files written
by forgegym 0.1.0 read and migrated, anything else refused with what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from forgegym.play.results import (
    EPISODES_FORMAT,
    Episode,
    EvalResults,
    Results,
    Step,
    load_episodes,
    save_episodes,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "results"
#: `forgegym eval --env Forge/Oversight-v0 --policy reference --policy noop --episodes 2`
#: as forgegym 0.1.0 wrote it (format forgegym.eval/1).
OLD_EVAL = FIXTURES / "eval-0.1.0.json"
#: `save_trajectories(collect_rollouts(2 Oversight envs, reference, episodes=3, seed=0))`
#: as forgegym 0.1.0 wrote it (a bare JSON list).
OLD_TRAJECTORIES = FIXTURES / "trajectories-0.1.0.json"


def test_old_eval_file_is_migrated() -> None:
    raw = json.loads(OLD_EVAL.read_text())
    assert raw["format"] == "forgegym.eval/1"
    results = Results.load(OLD_EVAL)
    assert results.format == EPISODES_FORMAT
    assert results.metadata["migrated_from"] == "forgegym.eval/1"
    assert results.metadata["reports"] == raw["metadata"]["reports"]  # kept as written
    assert [(e.policy, e.index, e.seed) for e in results.episodes] == [
        ("reference", 0, 0),
        ("reference", 1, 1),
        ("noop", 0, 0),
        ("noop", 1, 1),
    ]
    for episode, old in zip(results.episodes, raw["episodes"], strict=True):
        assert episode.task_id == old["task_id"] and episode.score == old["score"]
        assert [s.reward for s in episode.steps] == [s["reward"] for s in old["steps"]]
        assert [s.action for s in episode.steps] == [s["action"] for s in old["steps"]]
        assert [s.index for s in episode.steps] == list(range(1, len(old["steps"]) + 1))
        assert episode.total_reward == pytest.approx(sum(s["reward"] for s in old["steps"]))
    assert {e.success for e in results.episodes if e.policy == "reference"} == {True}


def test_old_trajectories_file_is_migrated(tmp_path: Path) -> None:
    raw = json.loads(OLD_TRAJECTORIES.read_text())
    assert isinstance(raw, list) and "episode" in raw[0]
    episodes = load_episodes(OLD_TRAJECTORIES)
    assert [e.index for e in episodes] == [t["episode"] for t in raw] == [0, 1, 2]
    assert [e.env_index for e in episodes] == [t["env_index"] for t in raw]
    assert all(e.policy == "reference" and e.env_id == "Forge/Oversight-v0" for e in episodes)
    assert [e.reward_breakdown for e in episodes] == [
        t["steps"][-1]["reward_breakdown"] for t in raw
    ]
    assert Results.load(OLD_TRAJECTORIES).metadata == {"migrated_from": "trajectories"}
    # Written back, it is the current format and reads back unchanged.
    path = save_episodes(episodes, tmp_path / "new.json", source="migrated")
    assert json.loads(path.read_text())["format"] == EPISODES_FORMAT
    assert load_episodes(path) == episodes


def test_old_files_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from forgegym.play.plots import plot_episode, plot_scores

    assert plot_episode(OLD_EVAL, tmp_path / "eval.png").stat().st_size > 1000
    assert plot_scores(OLD_TRAJECTORIES, tmp_path / "scores.png").stat().st_size > 1000


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"format": "forgegym.curriculum/1"}, "got a curriculum state"),
        ({"kind": "forgegym.integrations.learning", "stages": []}, "got a learning report"),
        ({"format": "forgegym.episodes/9", "episodes": []}, "format 'forgegym.episodes/9'"),
        ({"format": "other/1"}, "got a file of format 'other/1'"),
        ([1, 2], "expected a list of episodes, got a list"),
        ("text", "got a JSON str"),
        ({"format": EPISODES_FORMAT, "episodes": [{"env_id": "x"}]}, r"episodes\.0\.policy"),
        ([{"episode": 0, "steps": []}], r"invalid trajectories at episodes\.0\.task_id"),
    ],
)
def test_what_is_not_results_is_refused_saying_what_it_is(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Results.from_data(data)


def test_load_refuses_a_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"format": "forgegym.episodes/1", "episodes": [')
    with pytest.raises(ValueError, match="not a JSON file"):
        Results.load(path)


def test_totals_are_written_and_any_string_round_trips(tmp_path: Path) -> None:
    episode = Episode(
        env_id="Forge/Toy-v0",
        policy="p",
        task_id="t",
        seed=4,
        score=0.5,
        success=False,
        initial_observation="code ∑ 中文 and a lone surrogate \ud800",
        steps=[Step(action="a", reward=-0.25), Step(action="b", reward=1.0, terminated=True)],
    )
    assert [s.index for s in episode.steps] == [1, 2] and episode.done
    path = save_episodes([episode], tmp_path / "r.json")
    written = json.loads(path.read_text())["episodes"][0]
    assert written["total_reward"] == 0.75 and written["length"] == 2
    assert load_episodes(path) == [episode]
    assert EvalResults is Results  # the old name is the same model


def test_step_indices_must_be_the_steps_positions() -> None:
    with pytest.raises(ValidationError, match="steps\\[1\\].index is 3, not 2"):
        Episode(
            env_id="e",
            policy="p",
            task_id="t",
            score=0.0,
            success=False,
            steps=[Step(index=1, reward=0.0), Step(index=3, reward=0.0)],
        )
