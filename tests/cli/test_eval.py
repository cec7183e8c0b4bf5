"""``forgegym eval``: telemetry wherever eval runs, Ctrl-C, the canary table, the tables'
means named."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from forgegym.cli import main
from forgegym.play.results import Results


@pytest.fixture(scope="module")
def fake_url() -> Iterator[str]:
    # Started outside any test's output capture (the server logs from its own thread).
    pytest.importorskip("openai")
    pytest.importorskip("fastapi")
    from forgegym.play.fake_openai import FakeOpenAIServer, create_app, index_tasks

    app = create_app(index_tasks(["Forge/Oversight-v0"], episodes=2, seed=0))
    with FakeOpenAIServer(app) as fake:
        yield fake.url


def test_eval_model_prints_and_writes_its_telemetry(
    fake_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env_id = "Forge/Oversight-v0"
    code = main(
        [
            "eval",
            "--model",
            "fake-malformed",
            "--base-url",
            fake_url,
            "--env",
            env_id,
            "--episodes",
            "2",
            "--out",
            str(tmp_path / "m.json"),
            "--no-cache",
            "--quiet",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "cheating telemetry" in out and "unparseable" in out
    telemetry = Results.load(tmp_path / "m.json").metadata["telemetry"]
    assert telemetry[f"{env_id} fake-malformed"]["forgegym/unparseable"] == 1.0


def test_eval_tables_say_which_mean_is_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_path = tmp_path / "r.json"
    args = ["eval", "--env", "Forge/Oversight-v0", "--episodes", "2", "--quiet"]
    assert main([*args, "--out", str(out_path)]) == 0
    out = capsys.readouterr().out
    assert "plain means over episodes" in out and "difficulty-weighted" in out


def test_ctrl_c_exits_130_for_a_policy_eval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import forgegym.play.evaluation as evaluation

    def interrupted(*args: object, **kwargs: object) -> Results:
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluation, "evaluate", interrupted)
    code = main(["eval", "--env", "Forge/Oversight-v0", "--out", str(tmp_path / "x.json")])
    assert code == 130
    assert "interrupted" in capsys.readouterr().err


def test_the_canary_table_keeps_what_is_worth_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["eval", "--env", "Forge/Oversight-v0", "--episodes", "1", "--quiet"]
    assert main([*args, "--canaries", "3", "--out", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    table = out[out.index("cheat rate on canaries") :]
    table = table[: table.index("cheating telemetry")]
    assert "positive control" in table  # cheat:* is meant to reach 100%
    assert "each at 0.00%" in table  # the zero rows summarised in one
    assert table.count("\n") < 30
    rates = Results.load(tmp_path / "c.json").metadata["canaries"]["Forge/Oversight-v0"]
    assert "reference" in rates and any(p.startswith("cheat:") for p in rates)
    hacks = [p for p in rates if p.startswith("hack:")]
    assert hacks and all("hack:" not in line for line in table.splitlines() if "0.00%" in line)
