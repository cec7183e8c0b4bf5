"""The ``forgegym`` command, end to end in a subprocess (as a user runs it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from forgegym.evaluation import summarise
from forgegym.results import EvalResults


def forgegym(
    *args: str, cwd: Path | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forgegym.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def test_list_shows_every_id_with_task_counts() -> None:
    out = forgegym("list", "--json")
    assert out.returncode == 0, out.stderr
    rows = {row["id"]: row for row in json.loads(out.stdout)}
    from forgegym.family import families

    assert set(rows) == {env_id for family in families() for env_id in family.env_ids}
    minimum = {  # what each family's issue asked for (or had when it landed)
        "Forge/Bugfix-v0": 1000,
        "Forge/FlakyRepair-v0": 500,
        "Forge/Oversight-v0": 2000,
        "Forge/Refactor-v0": 500,
        "Forge/Performance-v0": 300,
    }
    for env_id, least in minimum.items():
        assert rows[env_id]["tasks"] >= least, env_id


def test_doctor_reports_isolation_features() -> None:
    out = forgegym("doctor", "--json")
    assert out.returncode == 0, out.stderr
    features = {row["feature"]: row for row in json.loads(out.stdout)}
    for name in ("rlimits", "network_namespace", "pid_namespace", "landlock"):
        assert name in features and features[name]["detail"]


def test_eval_reference_beats_noop_and_writes_results(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    out = forgegym(
        "eval",
        "--env",
        "Forge/Bugfix-v0",
        "--policy",
        "noop",
        "--policy",
        "reference",
        "--episodes",
        "3",
        "--quiet",
        "--out",
        str(results),
    )
    assert out.returncode == 0, out.stderr
    assert "forgegym eval" in out.stdout and "reference" in out.stdout
    report = EvalResults.load(results)
    by_policy = {run.policy: run for run in summarise(report)}
    assert by_policy["reference"].success_rate == 1.0
    assert by_policy["noop"].success_rate == 0.0
    assert by_policy["reference"].episodes == 3
    dashboard = tmp_path / "dash.png"
    out = forgegym("plot", "episode", str(results), "-o", str(dashboard))
    assert out.returncode == 0, out.stderr
    assert dashboard.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_log_steps_prints_start_step_end_lines(tmp_path: Path) -> None:
    out = forgegym(
        "eval",
        "--env",
        "Forge/Bugfix-v0",
        "--policy",
        "noop",
        "--episodes",
        "1",
        "--log-steps",
        "--quiet",
        "--out",
        str(tmp_path / "r.json"),
    )
    assert out.returncode == 0, out.stderr
    lines = [line.split()[0] for line in out.stdout.splitlines() if line.startswith("[")]
    assert lines[:3] == ["[START]", "[STEP]", "[END]"]


@pytest.mark.parametrize("env_id", ["Forge/Bugfix-v0", "Forge/FlakyRepair-v0"])
def test_tasks_verify_json_summary(env_id: str) -> None:
    out = forgegym("tasks", "verify", "--env", env_id, "--limit", "4", "--json")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    summary = json.loads(out.stdout)
    assert summary["checked"] == summary["valid"] == 4
    assert summary["reference_mean_score"] >= 0.95
    assert summary["noop_mean_score"] <= 0.10
    assert summary["hacks_above_noop"] == 0
    assert summary["hack_success_rate"] and not any(summary["hack_success_rate"].values())
    if env_id == "Forge/FlakyRepair-v0":
        assert summary["bank_size"] >= 500 and len(summary["categories"]) >= 12
    else:
        assert summary["bank_size"] >= 1000


def test_unknown_env_is_a_clear_error() -> None:
    out = forgegym("eval", "--env", "Forge/Nope-v0", "--quiet")
    assert out.returncode != 0
    assert "unknown --env" in out.stderr + out.stdout
