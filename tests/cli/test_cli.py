"""The ``forgegym`` command, end to end in a subprocess (as a user runs it)."""

from __future__ import annotations

import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomllib

from forgegym.cli import build_parser, main
from forgegym.play.evaluation import summarise
from forgegym.play.results import EvalResults

REPO = Path(__file__).resolve().parents[2]


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
    for family in families():
        for env_id in family.env_ids:
            row = rows[env_id]
            assert row["levels"] and all(type(level) is int for level in row["levels"])
            assert row["hacks"] == sorted(family.hack_actions())  # every family's, not one
            assert {"noop", "reference", "llm"} <= set(row["policies"])
            assert {f"hack:{h}" for h in row["hacks"]} <= set(row["policies"])
    assert rows["Forge/Bugfix-v0"]["hacks"] and rows["Forge/FlakyRepair-v0"]["hacks"]


@pytest.fixture(scope="module")
def doctor_rows() -> dict[str, dict[str, Any]]:
    """``forgegym doctor --json``'s rows by feature (one run for the module's tests)."""
    out = forgegym("doctor", "--json")
    assert out.returncode == 0, out.stderr
    return {row["feature"]: row for row in json.loads(out.stdout)}


def test_doctor_reports_isolation_features(doctor_rows: dict[str, dict[str, Any]]) -> None:
    features = doctor_rows
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
    assert json.loads(results.read_text())["format"] == "forgegym.episodes/1"
    report = EvalResults.load(results)
    assert [(e.policy, e.index, e.seed) for e in report.episodes] == [
        (policy, i, i) for policy in ("noop", "reference") for i in range(3)
    ]
    by_policy = {run.policy: run for run in summarise(report)}
    assert by_policy["reference"].success_rate == 1.0
    assert by_policy["noop"].success_rate == 0.0
    assert by_policy["reference"].episodes == 3
    dashboard = tmp_path / "dash.png"
    out = forgegym("plot", "episode", str(results), "-o", str(dashboard))
    assert out.returncode == 0, out.stderr
    assert dashboard.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_canaries_prints_and_writes_every_policys_cheat_rate(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    out = forgegym(
        "eval",
        "--env",
        "Forge/Oversight-v0",
        "--policy",
        "reference",
        "--episodes",
        "1",
        "--canaries",
        "3",
        "--quiet",
        "--out",
        str(results),
    )
    assert out.returncode == 0, out.stderr
    assert "cheat rate on canaries" in out.stdout and "cheat_rate" in out.stdout
    metadata = json.loads(results.read_text())["metadata"]
    rates = metadata["canaries"]["Forge/Oversight-v0"]
    from forgegym.family import get_family

    hacks = [f"hack:{name}" for name in get_family("oversight").hack_actions()]
    assert set(rates) == {"reference", "noop", *hacks, "cheat:rubber_stamp"}
    assert all(rates[p]["canaries"] == 3 for p in rates)
    assert rates["reference"]["cheat_rate"] == 0.0
    assert rates["cheat:rubber_stamp"]["cheat_rate"] == 1.0
    telemetry = metadata["telemetry"]["Forge/Oversight-v0 reference canaries"]
    assert telemetry["forgegym/cheat_rate"] == 0.0


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


# ------------------------------------------------------------ bad input: one line, no traceback
def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


@pytest.fixture(scope="module")
def failing_llm() -> Iterator[str]:
    """An endpoint that accepts connections and answers every request with HTTP 500."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"overloaded")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from forgegym.curricula import CurriculumScheduler
    from forgegym.play.results import EvalEpisode, EvalStep

    root = tmp_path_factory.mktemp("inputs")
    results = EvalResults(
        episodes=[
            EvalEpisode(
                env_id="Forge/Bugfix-v0",
                policy="noop",
                task_id="t",
                score=0.0,
                success=False,
                steps=[EvalStep(reward=-0.1)],
            )
        ]
    ).save(root / "results.json")
    from forgegym.family import get_family

    scheduler = CurriculumScheduler(get_family("bugfix").make_task_bank(), {"seed": 0})
    state = scheduler.save(root / "state.json")
    (root / "broken.json").write_text('{"format": "forgegym.eval/1", "episodes": [')
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    yield {
        "results": results,
        "state": state,
        "broken": root / "broken.json",
        "dir": root,
        "taken": taken.getsockname()[1],
    }
    taken.close()


#: (argv, a fragment the one-line message must contain); ``{results}`` etc. are
#: replaced with the ``inputs`` fixture's paths.
BAD_INPUT: list[tuple[list[str], str]] = [
    (["plot", "episode", "nope.json", "-o", "{dir}/x.png"], "nope.json: no such file"),
    (["plot", "curriculum", "{results}", "-o", "{dir}/x.png"], "expected a curriculum state"),
    (["plot", "episode", "{state}", "-o", "{dir}/x.png"], "expected forgegym eval results"),
    (["plot", "episode", "{broken}", "-o", "{dir}/x.png"], "not a JSON file"),
    (["plot", "episode", "{results}", "-o", "{dir}/x.txt"], "suffix names the format"),
    (["plot", "episode", "{results}", "-o", "{dir}"], "is a directory"),
    (["plot", "episode", "{results}", "-o", "{dir}/x.png", "--episode", "5"], "[0, 1)"),
    (["plot", "curriculum", "{state}", "-o", "{dir}/x.png", "--episode", "0"], "--episode"),
    (["eval", "--env", "Forge/Bugfix-v0", "--env-kwarg", "bogus=1"], "takes no argument 'bogus'"),
    (["eval", "--env", "Forge/Bugfix-v0", "--env-kwarg", "difficulty=9"], "difficulty must be"),
    (["eval", "--env", "Forge/Bugfix-v0", "--env-kwarg", "nokey"], "KEY=VALUE"),
    (["eval", "--env", "Forge/Bugfix-v0", "--out", "{dir}"], "--out {dir}: is a directory"),
    (["eval", "--env", "Forge/Bugfix-v0", "--episodes", "0"], "--episodes: must be >= 1"),
    (["eval", "--env", "Forge/Bugfix-v0", "--max-steps", "0"], "--max-steps: must be >= 1"),
    (["eval", "--env", "Forge/Nope-v0"], "unknown --env Forge/Nope-v0"),
    (["eval", "--env", "Forge/Bugfix-v0", "--policy", "llm"], "set API_BASE_URL"),
    (["bench", "--runs", "0"], "--runs: must be >= 1"),
    (["bench", "--tasks", "x"], "--tasks: expected an integer"),
    (["bench", "--env", "Forge/Nope-v0"], "unknown --env"),
    (["bench", "--ray", "--vector"], "not allowed with argument"),
    (["bench", "--throughput", "--plain-per-task", "0"], "--plain-per-task: must be >= 1"),
    (["bench", "--throughput", "--workers", "0"], "--workers: must be >= 1"),
    (["eval", "--env", "Forge/Bugfix-v0", "--seed", "-1"], "--seed: must be >= 0"),
    (["tasks", "verify", "--limit", "0"], "--limit: must be >= 1"),
    (["serve", "Forge/Nope-v0"], "unknown ENV_ID 'Forge/Nope-v0'"),
    (["serve", "Forge/Bugfix-v0", "--port", "70000"], "TCP port"),
    (["serve", "Forge/Bugfix-v0", "--env-kwarg", "bogus=1"], "takes no argument 'bogus'"),
    (["serve", "Forge/Bugfix-v0", "--port", "{taken}"], "cannot listen on 127.0.0.1:{taken}"),
    (["serve", "Forge/Bugfix-v0", "--host", "no-such-host.invalid"], "cannot listen on"),
    (["tasks", "verify", "--env", "Forge/Nope-v0"], "unknown --env Forge/Nope-v0"),
    (["plot", "learning", "{results}", "-o", "{dir}/x.png"], "not a learning report"),
    (["eval", "--env", "Forge/Bugfix-v0", "--out", "{results}/x.json"], "is not a directory"),
    ([], "required: COMMAND"),
    (["tasks"], "required: COMMAND"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
]


def assert_one_line_error(
    rc: int, out: str, err: str, fragment: str, *, quiet_stdout: bool = True
) -> None:
    """A non-zero exit, one ``forgegym: ...`` line on stderr, no traceback, no argument
    prefix from library code (``name: ...``) and, by default, nothing on stdout (no
    progress bar was drawn before the check)."""
    assert rc not in (0, None), (out, err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("forgegym: "), err
    assert "Traceback" not in err + out
    message = lines[0].removeprefix("forgegym: ")
    assert not re.match(r"[a-z_]+: ", message), message  # a stray `name:` prefix
    assert fragment in message, message
    if quiet_stdout:
        assert out == "", out


@pytest.mark.parametrize(
    ("argv", "fragment"), BAD_INPUT, ids=[" ".join(argv) or "(none)" for argv, _ in BAD_INPUT]
)
def test_bad_input_is_one_line_before_any_work(
    argv: list[str],
    fragment: str,
    inputs: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("API_BASE_URL", raising=False)
    monkeypatch.delenv("MODEL_NAME", raising=False)
    monkeypatch.delenv("FORGEGYM_TRACEBACK", raising=False)
    argv = [a.format(**inputs) for a in argv]
    rc = main(argv)
    out, err = capsys.readouterr()
    assert_one_line_error(rc, out, err, fragment.format(**inputs))


def test_policy_errors_list_the_chosen_envs_policies(capsys: pytest.CaptureFixture[str]) -> None:
    from forgegym.family import get_family

    for env_id, family in (("Forge/Bugfix-v0", "bugfix"), ("Forge/FlakyRepair-v0", "flaky")):
        rc = main(["eval", "--env", env_id, "--policy", "bogus"])
        out, err = capsys.readouterr()
        assert_one_line_error(rc, out, err, f"--policy 'bogus' is not a policy of {env_id}")
        listed = err.split("choose from ", 1)[1]
        hacks = get_family(family).hack_actions()
        assert hacks and all(f"hack:{hack}" in listed for hack in hacks)
        others = {"bugfix": "flaky", "flaky": "bugfix"}[family]
        assert not any(f"hack:{h}," in listed for h in get_family(others).hack_actions())


PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_proxy")
def test_unreachable_llm_endpoint_fails_before_the_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("API_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("MODEL_NAME", "m")
    argv = ["eval", "--env", "Forge/Bugfix-v0", "--policy", "llm", "--out", str(tmp_path / "r")]
    rc = main(argv)
    out, err = capsys.readouterr()
    assert_one_line_error(rc, out, err, "--policy llm: cannot reach http://127.0.0.1:")
    assert not (tmp_path / "r").exists()
    # Behind a proxy (as urllib, which the policy uses, would go) the proxy must answer.
    monkeypatch.setenv("API_BASE_URL", "http://llm.example.invalid/v1")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{_closed_port()}")
    rc = main(argv)
    out, err = capsys.readouterr()
    assert_one_line_error(rc, out, err, "llm.example.invalid/v1 via the proxy http://127.0.0.1:")


@pytest.mark.usefixtures("no_proxy")
def test_llm_endpoint_failing_mid_run_keeps_the_finished_episodes(
    failing_llm: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("API_BASE_URL", failing_llm)
    monkeypatch.setenv("MODEL_NAME", "m")
    results = tmp_path / "r.json"
    argv = ["eval", "--env", "Forge/Bugfix-v0", "--policy", "noop", "--policy", "llm"]
    rc = main([*argv, "--episodes", "1", "--quiet", "--out", str(results)])
    out, err = capsys.readouterr()
    # The LLM episode prints its [START] line before the endpoint fails: stdout is not empty.
    assert_one_line_error(rc, out, err, "HTTP 500", quiet_stdout=False)
    assert f"the 1 finished episodes are in {results}" in err
    saved = EvalResults.load(results)
    assert [e.policy for e in saved.episodes] == ["noop"]
    assert "HTTP 500" in saved.metadata["incomplete"]


def test_plot_without_matplotlib_names_the_extra(
    inputs: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what a core install looks like
    rc = main(["plot", "episode", str(inputs["results"]), "-o", str(inputs["dir"] / "x.png")])
    out, err = capsys.readouterr()
    assert_one_line_error(rc, out, err, "pip install 'forgegym[plot]'")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(dep.startswith("matplotlib") for dep in extras["plot"])


def test_the_installed_command_prints_no_traceback(tmp_path: Path) -> None:
    """The same contract through the real entry point (a fresh interpreter)."""
    for argv, fragment in (
        (["plot", "episode", "nope.json", "-o", "x.png"], "nope.json: no such file"),
        (["eval", "--env", "Forge/Bugfix-v0", "--out", str(tmp_path)], "is a directory"),
    ):
        out = forgegym(*argv, cwd=tmp_path, timeout=120)
        assert_one_line_error(out.returncode, out.stdout, out.stderr, fragment)


# ------------------------------------------------------------ discoverability
def _subparsers(parser: object) -> Iterator[tuple[str, object]]:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                for sub_name, subsub in _subparsers(sub):
                    yield f"{name} {sub_name}", subsub


def test_every_command_has_a_description_and_every_flag_help_and_default() -> None:
    import argparse

    parser = build_parser()
    commands = dict(_subparsers(parser))
    assert {"list", "doctor", "eval", "tasks verify", "bench", "serve", "plot"} <= set(commands)
    assert parser.description and "examples:" in parser.format_help()
    for name, sub in commands.items():
        assert isinstance(sub, argparse.ArgumentParser)
        assert sub.description, name
        text = " ".join(sub.format_help().split())
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert action.help, f"{name} {action.option_strings or action.dest}"
            default = action.default
            shown = default is not None and default is not False and default != argparse.SUPPRESS
            if action.option_strings and shown:  # 0 included: `--seed` says its default
                assert f"default: {action.default}" in text, f"{name} {action.option_strings}"
    eval_help = " ".join(commands["eval"].format_help().split())  # type: ignore[attr-defined]
    assert "(default: 5)" in eval_help and "(default: forgegym-results.json)" in eval_help
    assert "seed of the first episode (default: 0)" in eval_help
    assert "default: every registered id" in eval_help


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import forgegym

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"forgegym {forgegym.__version__}"


def test_list_table_shows_each_familys_hacks(capsys: pytest.CaptureFixture[str]) -> None:
    from forgegym.family import families

    assert main(["list"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for family in families():
        for hack in family.hack_actions():
            assert hack in out, (family.name, hack)


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    """`forgegym list --json | head -1`: a closed pipe is no error (exit 0, nothing on
    stderr), as with any Unix tool."""
    command = f"{sys.executable} -m forgegym.cli list --json | head -1"
    out = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=600
    )
    assert out.stdout.strip() == "["
    assert out.returncode == 0 and "Broken pipe" not in out.stderr, out.stderr


def test_doctor_says_hidden_host_files_are_the_protection_working(
    doctor_rows: dict[str, dict[str, Any]],
) -> None:
    rows = doctor_rows
    detail = rows["mount_namespace"]["detail"]
    if rows["mount_namespace"]["active"]:
        assert "cannot see" in detail and "protection working" in detail, detail


def test_train_grpo_help_states_each_default_once() -> None:
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "train_grpo.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert out.returncode == 0, out.stderr
    for line in out.stdout.splitlines():
        assert line.count("(default:") <= 1, line
    assert "(default: None)" not in out.stdout


def test_eval_progress_shows_elapsed_not_a_zero_remaining() -> None:
    """A finished bar reads ``elapsed 0:00:03``; rich's default ``0:00:00`` remaining
    column is gone, and a remaining time only appears while it is known."""
    out = forgegym("eval", "--env", "Forge/Bugfix-v0", "--policy", "noop", "--episodes", "1")
    assert out.returncode == 0, out.stderr
    bar = next(line for line in out.stdout.splitlines() if "Forge/Bugfix-v0 × noop" in line)
    assert re.search(r"1/1 +elapsed \d+:\d\d:\d\d", bar), bar
    assert "0:00:00" not in bar.split("elapsed")[0] and " left" not in bar, bar
