"""``forgegym leaderboard``: rows per policy, columns per family, the paired difference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from forgegym.cli import main
from forgegym.play.leaderboard import build_leaderboard, load_results, to_html, to_markdown
from forgegym.play.results import Episode, Results


def _results(policy: str, skill: float, seed: int, runs: int = 3) -> Results:
    """Two families, three levels, 12 tasks each; a task is solved with probability
    ``skill`` minus its level's difficulty (same task ids for every policy)."""
    rng = np.random.default_rng(seed)
    episodes = []
    for family in ("alpha", "beta"):
        for task in range(12):
            level = 1 + task % 3
            for run in range(runs):
                solved = bool(rng.random() < skill - 0.2 * (level - 1))
                episodes.append(
                    Episode(
                        env_id=f"Forge/{family.title()}-v0",
                        policy=policy,
                        task_id=f"{family}/{task}",
                        family=family,
                        difficulty=level,
                        run=run,
                        score=1.0 if solved else 0.25,
                        success=solved,
                    )
                )
    return Results(episodes=episodes, metadata={"levels": {"alpha": [1, 2, 3], "beta": [1, 2, 3]}})


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    strong, weak = tmp_path / "strong.json", tmp_path / "weak.json"
    _results("strong-model", 0.9, 1).save(strong)
    _results("weak-model", 0.5, 2).save(weak)
    return [weak, strong]


def test_rows_are_ranked_with_family_columns_and_a_paired_difference(files: list[Path]) -> None:
    board = build_leaderboard(load_results(files), metric="score")
    assert [r.name for r in board.rows] == ["strong-model", "weak-model"]
    assert board.families == ["alpha", "beta"]
    strong, weak = board.rows
    assert strong.rank == 1 and strong.tasks == 24 and strong.runs == 3 and strong.episodes == 72
    for row in board.rows:
        for value in [*row.families.values(), row.aggregate]:
            assert value is not None and value.low <= value.value <= value.high
    (diff,) = board.differences
    assert (diff.a, diff.b, diff.shared_tasks) == ("strong-model", "weak-model", 24)
    assert diff.difference.value == pytest.approx(strong.aggregate.value - weak.aggregate.value)
    assert diff.difference.low > 0 and diff.p_value < 0.05
    # best-of-runs is at least the mean of runs, for every row
    best = build_leaderboard(load_results(files), metric="best")
    for b, s in zip(best.rows, board.rows, strict=True):
        assert b.aggregate.value >= s.aggregate.value


def test_markdown_and_html_render_every_row(files: list[Path]) -> None:
    board = build_leaderboard(load_results(files))
    markdown = to_markdown(board)
    lines = markdown.splitlines()
    assert lines[0] == "| rank | model | alpha | beta | aggregate | tasks | runs |"
    assert lines[2].startswith("| 1 | strong-model | ")
    assert "strong-model − weak-model: +" in markdown and "20/35/45" in markdown
    page = to_html(board)
    assert page.count("<tr>") == 3 and "<td>weak-model</td>" in page
    board.rows[0].name = "<script>"
    assert "<script>" not in to_html(board) and "&lt;script&gt;" in to_html(board)


def test_the_leaderboard_command(files: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", *map(str, files)]) == 0
    out = capsys.readouterr().out
    assert "forgegym leaderboard" in out and "strong-model − weak-model" in out
    assert main(["leaderboard", *map(str, files), "--markdown", "--metric", "pass@2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| rank | model |") and "metric pass@2" in out
    assert main(["leaderboard", *map(str, files), "--html"]) == 0
    assert capsys.readouterr().out.startswith("<!doctype html>")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--metric", "pass@4"], "pass@4 needs >= 4 runs"),
        (["--metric", "median"], "unknown metric"),
        (["--weights", "a,b"], "numbers separated by commas"),
        (["--markdown", "--html"], "not allowed with"),
    ],
)
def test_leaderboard_usage_errors(
    files: list[Path], extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["leaderboard", *map(str, files), *extra]) == 2
    assert message in capsys.readouterr().err


def test_files_that_are_not_results_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.json"
    assert main(["leaderboard", str(missing)]) == 2
    assert "nope.json: no such results file" in capsys.readouterr().err
    junk = tmp_path / "state.json"
    junk.write_text('{"format": "forgegym.curriculum/1"}')
    assert main(["leaderboard", str(junk)]) == 2
    assert "curriculum state" in capsys.readouterr().err
    empty = tmp_path / "empty.json"
    Results().save(empty)
    assert main(["leaderboard", str(empty)]) == 2
    assert "no episodes" in capsys.readouterr().err


# ------------------------------------------------------------------ honest comparisons
def _same_skill(policy: str, runs: int, seed: int, p: float = 0.3) -> Results:
    rng = np.random.default_rng(seed)
    episodes = [
        Episode(
            env_id="Forge/Alpha-v0",
            policy=policy,
            task_id=f"alpha/{task}",
            family="alpha",
            difficulty=1 + task % 3,
            run=run,
            score=float(solved),
            success=solved,
        )
        for task in range(30)
        for run in range(runs)
        for solved in [bool(rng.random() < p)]
    ]
    return Results(episodes=episodes)


def test_rows_with_different_runs_are_compared_at_a_common_k(tmp_path: Path) -> None:
    # Same skill (p = 0.3); best-of-8 against best-of-1 read 0.885 against 0.095.
    many, one = tmp_path / "many.json", tmp_path / "one.json"
    _same_skill("eight-runs", 8, 1).save(many)
    _same_skill("one-run", 1, 2).save(one)
    board = build_leaderboard(load_results([many, one]))
    assert board.metric == "best@1"
    assert any("common k = 1" in note for note in board.notes)
    values = {row.name: row.aggregate.value for row in board.rows}
    assert abs(values["eight-runs"] - values["one-run"]) < 0.15
    assert all(abs(v - 0.3) < 0.15 for v in values.values())
    (diff,) = board.differences
    assert diff.p_value > 0.05
    # Asked explicitly for a k some row cannot give: a refusal that says why.
    with pytest.raises(ValueError, match="one-run.*pass@2 needs >= 2 runs"):
        build_leaderboard(load_results([many, one]), metric="pass@2")


def test_equal_rows_share_a_rank(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    _same_skill("first", 2, 5).save(a)
    twin = _same_skill("second", 2, 5)
    twin.save(b)
    board = build_leaderboard(load_results([a, b]), metric="score")
    assert [row.rank for row in board.rows] == [1, 1]


def _edited(tmp_path: Path, name: str, **changes: object) -> Path:
    results = _same_skill("m", 1, 3)
    episode = results.episodes[0]
    for key, value in changes.items():
        setattr(episode, key, value)
    path = tmp_path / name
    results.save(path)
    return path


def test_results_are_checked_against_their_tasks(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    _same_skill("other", 1, 4).save(good)
    with pytest.raises(ValueError, match=r"bad-score\.json: .*score 1\.7 is outside \[0, 1\]"):
        build_leaderboard(load_results([_edited(tmp_path, "bad-score.json", score=1.7)]))
    relabelled = _edited(tmp_path, "relabelled.json", difficulty=3)
    with pytest.raises(ValueError, match=r"alpha/0.*level 3 in .*relabelled\.json.*level 1"):
        build_leaderboard(load_results([good, relabelled]))
    twice = _same_skill("m", 1, 3)
    twice.episodes.append(twice.episodes[0].model_copy())
    path = tmp_path / "twice.json"
    twice.save(path)
    with pytest.raises(ValueError, match=r"twice\.json: .*run 0 of .*alpha/0.* twice"):
        build_leaderboard(load_results([path]))


def test_tasks_of_a_registered_env_must_be_in_its_bank(tmp_path: Path) -> None:
    import forgegym  # noqa: F401  (registers the Forge/* ids)

    episode = Episode(
        env_id="Forge/Bugfix-v0",
        policy="m",
        task_id="bugfix/no_such_task/seed",
        family="bugfix",
        difficulty=1,
        score=1.0,
        success=True,
    )
    path = tmp_path / "invented.json"
    Results(episodes=[episode]).save(path)
    with pytest.raises(ValueError, match=r"invented\.json: .*not a task of Forge/Bugfix-v0"):
        build_leaderboard(load_results([path]))
    assert main(["leaderboard", str(path)]) == 2


def test_leaderboard_help_shows_percent_signs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["leaderboard", "--help"])
    out = capsys.readouterr().out
    assert "95%" in out and "%%" not in out
