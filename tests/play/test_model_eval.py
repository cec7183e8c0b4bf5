"""``forgegym eval --model`` against the scripted fake server: every family, runs,
concurrency, the cache on a rerun, multi-turn episodes, malformed replies, failures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytest.importorskip("fastapi")

from forgegym.cli import main  # noqa: E402
from forgegym.family.registration import env_ids  # noqa: E402
from forgegym.play.fake_openai import FakeOpenAIServer, create_app, index_tasks  # noqa: E402
from forgegym.play.results import Results  # noqa: E402

CHEAP = ["Forge/Oversight-v0", "Forge/Refactor-v0"]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAIServer]:
    # The first task (seed 0) of every registered id, as `eval --episodes 1` plays them.
    with FakeOpenAIServer(create_app(index_tasks(env_ids(), episodes=1, seed=0))) as server:
        yield server


def _eval(fake_url: str, out: Path, cache: Path, *args: str) -> Results:
    code = main(
        [
            "eval",
            "--base-url",
            fake_url,
            "--episodes",
            "1",
            "--out",
            str(out),
            "--cache",
            str(cache),
            "--quiet",
            *args,
        ]
    )
    assert code == 0
    return Results.load(out)


def test_the_reference_model_over_every_family_then_a_rerun_from_the_cache(
    fake: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--model", "fake-ref", "--runs", "3", "--concurrency", "16")
    first = _eval(fake.url, tmp_path / "ref.json", tmp_path / "cache.sqlite", *args)
    ids = env_ids()
    assert sorted({e.env_id for e in first.episodes}) == sorted(ids)
    assert len(first.episodes) == 3 * len(ids)
    assert sorted(e.run for e in first.episodes) == sorted([0, 1, 2] * len(ids))
    for episode in first.episodes:  # the reference solves its task, in one step
        assert episode.success and episode.score >= 0.9, episode
        assert episode.policy == "fake-ref" and len(episode.steps) == 1
    usage = first.metadata["usage"]
    assert usage["completions"] == usage["requests"] == 3 * len(ids)
    assert usage["cache_hits"] == 0 and usage["prompt_tokens"] > 0
    summary = first.metadata["aggregate"]["fake-ref"]
    assert summary["aggregate"]["metrics"]["success"]["value"] == 1.0
    assert summary["min_runs"] == 3 and "pass@3" in summary["aggregate"]["metrics"]
    assert {c["family"] for c in summary["cells"]} == {e.family for e in first.episodes}
    printed = capsys.readouterr().out
    assert "from the cache" in printed and "best of runs" in printed

    # The rerun (on the families whose grading is cheap: every episode is graded again)
    # sends not one request: the cache answers every run of every task.
    requests = fake.requests
    envs = [a for env_id in CHEAP for a in ("--env", env_id)]
    rerun = _eval(fake.url, tmp_path / "again.json", tmp_path / "cache.sqlite", *args, *envs)
    assert fake.requests == requests
    assert rerun.metadata["usage"]["cache_hits"] == 3 * len(CHEAP)
    assert rerun.metadata["usage"]["requests"] == 0
    before = {(e.task_id, e.run): e for e in first.episodes}
    for episode in rerun.episodes:
        assert episode.steps[0].action == before[episode.task_id, episode.run].steps[0].action
        assert episode.score == pytest.approx(before[episode.task_id, episode.run].score)


def test_multi_turn_malformed_and_noop_models(fake: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    envs = [a for env_id in CHEAP for a in ("--env", env_id)]
    multi = _eval(fake.url, tmp_path / "m.json", cache, "--model", "fake-multiturn", *envs)
    ref = _eval(fake.url, tmp_path / "r.json", cache, "--model", "fake-ref", *envs)
    for turned, single in zip(multi.episodes, ref.episodes, strict=True):
        assert len(turned.steps) == 2 and len(single.steps) == 1  # explored, then solved
        assert turned.score == pytest.approx(single.score) and turned.success
        assert "run_tests" in turned.steps[0].action or "probe" in turned.steps[0].action
    malformed = _eval(fake.url, tmp_path / "x.json", cache, "--model", "fake-malformed", *envs)
    for episode in malformed.episodes:
        assert episode.score == 0.0 and not episode.success
        assert all(s.info.get("action_error") for s in episode.steps)
        assert episode.steps[-1].truncated
    noop = _eval(fake.url, tmp_path / "n.json", cache, "--model", "fake-noop", *envs)
    assert all(e.score < 0.5 and not e.success for e in noop.episodes)


def test_a_failing_endpoint_stops_the_eval_and_keeps_nothing_false(
    fake: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fail.json"
    # Without the history, turn 2 of a multi-turn episode has no indexed prompt: the
    # fake answers 400, which is an error of the run, never a score.
    code = main(
        [
            "eval",
            "--env",
            "Forge/Oversight-v0",
            "--episodes",
            "1",
            "--model",
            "fake-multiturn",
            "--base-url",
            fake.url,
            "--no-history",
            "--no-cache",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 2
    assert "HTTP 400" in capsys.readouterr().err
    assert not out.exists()  # no episode finished, so no file claims a score


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "m", "--policy", "noop"], "give one"),
        (["--model", "m"], "--base-url"),
        (["--model", "m", "--base-url", "ftp://x"], "http(s) URL"),
        (["--model", "m", "--base-url", "http://127.0.0.1:9/v1"], "cannot reach"),
        (["--policy", "noop", "--concurrency", "4"], "--concurrency applies to `eval --model`"),
        (["--model", "m", "--temperature", "5"], "[0, 2]"),
        (["--model", "m", "--weights", "1,-1"], "non-negative"),
    ],
)
def test_eval_model_usage_errors(
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.delenv("API_BASE_URL", raising=False)
    code = main(["eval", "--env", "Forge/Oversight-v0", "--cache", str(tmp_path / "c"), *args])
    assert code == 2
    assert message in capsys.readouterr().err


def test_the_policy_flow_records_runs_and_the_aggregate(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    code = main(
        [
            "eval",
            "--env",
            "Forge/Oversight-v0",
            "--policy",
            "reference",
            "--episodes",
            "2",
            "--runs",
            "2",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    data = json.loads(out.read_text())
    assert sorted(e["run"] for e in data["episodes"]) == [0, 0, 1, 1]
    metrics = data["metadata"]["aggregate"]["reference"]["aggregate"]["metrics"]
    assert metrics["best"]["value"] >= 0.9 and "pass@2" in metrics
