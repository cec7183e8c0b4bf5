"""The ``forgegym`` command.

::

    forgegym list                         # ids, families, task counts
    forgegym doctor                       # which sandbox isolation features are active here
    forgegym eval --policy reference      # env x policy x episodes; table + JSON results
    forgegym eval --model NAME --base-url URL --runs 3   # a model, the evaluation protocol
    forgegym leaderboard RESULTS... [--markdown | --html]   # models compared, with intervals
    forgegym tasks verify --env ID --json # validate tasks (reference high, noop low, hacks <= noop)
    forgegym bench [--env ID] [--vector | --ray | --throughput | --reset]  # ratios / completions/s
    forgegym serve ENV_ID [--port 8000]   # OpenEnv-compatible server + dashboard at /
    forgegym plot episode RESULTS.json -o dash.png
    forgegym plot curriculum STATE.json -o curve.png
    forgegym plot telemetry TELEMETRY.jsonl -o telemetry.png

Every command iterates over the registered families (:mod:`forgegym.family`).

Errors: whatever a user can get wrong (an unknown id, policy or ``--env-kwarg``, an
output that is a directory, an unreachable LLM endpoint, a file of the wrong kind, a
missing extra) is checked before any work or progress bar and reported as one line on
stderr with exit status 2; an error met while working (``ValueError``, ``OSError``, a
failing LLM endpoint) is one line with status 1. ``FORGEGYM_TRACEBACK=1`` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from forgegym.cli.bench import cmd_bench
from forgegym.cli.common import (
    POLICY_HELP,
    CLIError,
    Parser,
    int_at_least,
    is_user_error,
    one_line,
    port_number,
    temperature_arg,
    weights_arg,
)
from forgegym.cli.doctor import cmd_doctor
from forgegym.cli.eval import cmd_eval
from forgegym.cli.leaderboard import cmd_leaderboard
from forgegym.cli.list import cmd_list
from forgegym.cli.plot import cmd_plot
from forgegym.cli.serve import cmd_serve
from forgegym.cli.tasks import cmd_tasks_build, cmd_tasks_verify

__all__ = ["CLIError", "build_parser", "main"]


_DESCRIPTION = """\
Gymnasium environments for training and evaluating code LLMs, graded by executing code
in a sandbox. Every command works for every registered family (`forgegym list`).

examples:
  forgegym list                                   # ids, task counts, policies and hacks
  forgegym doctor                                 # which sandbox isolation is active here
  forgegym eval --env Forge/Bugfix-v0 --policy reference --episodes 3
  forgegym eval --model my-model --base-url http://localhost:8000/v1 --runs 3
  forgegym leaderboard a.json b.json --markdown   # rows per model, paired differences
  forgegym tasks verify --env Forge/Bugfix-v0 --limit 10
  forgegym bench                                  # warm pool vs plain pytest, as a ratio
  forgegym serve Forge/Bugfix-v0 --port 8000      # OpenEnv server + dashboard at /
  forgegym plot episode forgegym-results.json -o dash.png
"""


def build_parser() -> argparse.ArgumentParser:
    from forgegym import __version__

    parser = Parser(prog="forgegym", description=_DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"forgegym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "list",
        help="registered environments, task counts, policies and hacks",
        description="Every registered id with its family, difficulty levels and task "
        "count, and each family's policies and known hacks.",
    )
    p.add_argument("--json", action="store_true", help="print JSON rows (one per id)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser(
        "doctor",
        help="which sandbox isolation features are active here",
        description="Which of the sandbox's isolation features (namespaces, seccomp, "
        "Landlock, rlimits, ...) are active on this machine, and why others are not.",
    )
    p.add_argument("--json", action="store_true", help="print JSON rows (one per feature)")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser(
        "eval",
        help="run baseline or LLM policies on environments",
        description="Play env x policy x episodes (seeds SEED, SEED+1, ...), print a "
        "summary table and write a JSON results file (`forgegym plot episode` reads it).",
    )
    p.add_argument(
        "--env",
        action="append",
        metavar="ID",
        help="environment id, repeatable (default: every registered id)",
    )
    p.add_argument("--policy", action="append", metavar="POLICY", help=POLICY_HELP)
    p.add_argument(
        "--episodes", type=int_at_least(1), default=5, help="episodes per env and policy"
    )
    p.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the first episode")
    p.add_argument(
        "--max-steps",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="steps per episode (default: the env's own)",
    )
    p.add_argument(
        "--env-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="gym.make keyword argument, VALUE parsed as JSON when it is; repeatable",
    )
    p.add_argument("--out", default="forgegym-results.json", metavar="PATH", help="results file")
    p.add_argument("--log-steps", action="store_true", help="print [START]/[STEP]/[END] lines")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--runs",
        type=int_at_least(1),
        default=1,
        help="runs per task (--model: independent samples; pass@k and best-of-runs need > 1)",
    )
    p.add_argument(
        "--canaries",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="also grade N canaries per env (impossible tasks: any success is cheating) with "
        "the reference, the no-op, every registered hack and the family's canary cheats; "
        "print each one's cheat rate and write it to the results file",
    )
    p.add_argument(
        "--weights",
        type=weights_arg,
        default="20,35,45",
        metavar="E,M,H",
        help="difficulty weights easy..hard, spread over each family's levels (default: 20,35,45)",
    )
    model = p.add_argument_group(
        "a model behind an OpenAI-compatible endpoint (instead of --policy)",
        "API_KEY (or OPENAI_API_KEY) is sent as the bearer token when set.",
    )
    model.add_argument("--model", metavar="NAME", help="the model to evaluate")
    model.add_argument(
        "--base-url",
        metavar="URL",
        help="the endpoint, e.g. http://localhost:8000/v1 (default: API_BASE_URL)",
    )
    model.add_argument(
        "--concurrency",
        type=int_at_least(1),
        default=None,
        metavar="C",
        help="episodes and requests in flight (default: 8)",
    )
    model.add_argument(
        "--temperature",
        type=temperature_arg,
        default=None,
        metavar="T",
        help="sampling temperature, fixed for every run (default: 0.2)",
    )
    model.add_argument(
        "--max-tokens",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="completion tokens per reply (default: 2048)",
    )
    model.add_argument(
        "--cache",
        metavar="PATH",
        help="completion cache, an SQLite file (default: ~/.cache/forgegym/completions.sqlite)",
    )
    model.add_argument("--no-cache", action="store_true", help="ask the endpoint every time")
    model.add_argument(
        "--no-history",
        action="store_true",
        help="send the system prompt and the current observation only, not the episode's "
        "chat history",
    )
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser(
        "leaderboard",
        help="compare models and policies from results files, with intervals",
        description="One row per model or policy of the results files (`forgegym eval` "
        "writes them), a column per family with the difficulty-weighted metric and its "
        "bootstrap 95%% interval, the aggregate over families, and a paired bootstrap of "
        "each row's difference with the leader on the tasks both played.",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results files (JSON)")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--markdown", action="store_true", help="print a markdown table")
    form.add_argument("--html", action="store_true", help="print an HTML page")
    form.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    p.add_argument(
        "--metric",
        default="best",
        help="best (best-of-runs score), score (mean of runs), success, best_success, pass@K",
    )
    p.add_argument(
        "--weights",
        type=weights_arg,
        default="20,35,45",
        metavar="E,M,H",
        help="difficulty weights easy..hard (default: 20,35,45)",
    )
    p.add_argument("--out", metavar="PATH", help="write the table to PATH (markdown by default)")
    p.set_defaults(func=cmd_leaderboard)

    p = sub.add_parser(
        "tasks",
        help="task validation",
        description="Task validation (see `forgegym tasks verify --help`).",
    )
    tasks_sub = p.add_subparsers(dest="tasks_command", required=True, metavar="COMMAND")
    v = tasks_sub.add_parser(
        "verify",
        help="reference high, start fails, noop low, hacks <= noop",
        description="Grade tasks drawn from each bank: the reference must score high, "
        "the starting state fail, the no-op score low and every known hack no more than "
        "the no-op. Exits 1 when a task is invalid.",
    )
    v.add_argument(
        "--env",
        action="append",
        metavar="ID",
        help="environment id, repeatable (default: every registered id)",
    )
    v.add_argument(
        "--limit", type=int_at_least(1), default=50, help="tasks to grade per environment"
    )
    v.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the task draw")
    v.add_argument(
        "--offset",
        type=int_at_least(0),
        default=0,
        help="skip the first N tasks of the seed's order (chunks)",
    )
    v.add_argument(
        "--skip-partial",
        action="store_true",
        help="do not grade the family's partial fix (reported only, never a validity check)",
    )
    v.add_argument(
        "--env-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="keyword argument of gym.make, repeatable (e.g. bank=real)",
    )
    v.add_argument("--json", action="store_true", help="print a JSON summary")
    v.set_defaults(func=cmd_tasks_verify)
    b = tasks_sub.add_parser(
        "build",
        help="build validated Bugfix tasks from real projects (the task factory)",
        description="Fetch pinned sdists (or take a repository), install their test "
        "dependencies, keep the tests that pass twice in the sandbox, map tests to the "
        "functions and methods they run, mutate those and keep the mutants that break tests "
        "(screened in one process, confirmed in the sandbox as grading runs them). Writes a "
        "<project>-<version>.jsonl.gz manifest, a .project.json record and a .stats.json "
        "file per project.",
    )
    src = b.add_mutually_exclusive_group(required=True)
    src.add_argument("--from-pypi", nargs="+", metavar="NAME==VERSION", help="pinned sdists")
    src.add_argument("--repo", metavar="PATH", help="a project folder (name-version from --name)")
    b.add_argument("--name", metavar="NAME==VERSION", help="project pin of --repo")
    b.add_argument("--out", default="real-bank", metavar="DIR", help="manifest folder")
    b.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the mutant draw")
    b.add_argument(
        "--python",
        metavar="PATH",
        help="host interpreter of the coverage and screen runs (default: this one)",
    )
    b.add_argument(
        "--with",
        dest="extra_requirements",
        action="append",
        default=[],
        metavar="REQUIREMENT",
        help="a test dependency the project does not declare (repeatable)",
    )
    b.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="sdist cache (default $FORGEGYM_SDIST_CACHE or ~/.cache/forgegym/sdists)",
    )
    b.add_argument(
        "--max-candidates", type=int_at_least(1), default=400, help="mutants screened per project"
    )
    b.add_argument("--max-tasks", type=int_at_least(1), default=250, help="tasks kept per project")
    b.add_argument(
        "--max-per-function",
        type=int_at_least(1),
        default=10,
        help="tasks kept per function or method (distinct failures only)",
    )
    b.set_defaults(func=cmd_tasks_build)

    p = sub.add_parser(
        "bench",
        help="benchmarks, reported as ratios against the baseline",
        description="Without options: the sandbox runner's latency, warm fork-server pool "
        "vs a plain `python -m pytest` per run. Speeds are reported as ratios.",
    )
    p.add_argument("--env", metavar="ID", help="benchmark this id's family grading")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--vector", action="store_true", help="async vs sync vector rollouts")
    mode.add_argument(
        "--ray", action="store_true", help="grading: local pool vs Ray, one and two nodes"
    )
    p.add_argument(
        "--runs", type=int_at_least(1), default=30, help="runs per runner (runner bench)"
    )
    mode.add_argument(
        "--reset",
        action="store_true",
        help="the first reset of random tasks, each in a fresh process, cached and cold "
        "(default: Forge/Bugfix-v0 bank=real, 50 tasks)",
    )
    p.add_argument(
        "--cold-tasks",
        type=int_at_least(0),
        default=10,
        help="--reset: tasks also measured cold (nothing unpacked)",
    )
    mode.add_argument(
        "--throughput",
        action="store_true",
        help="GRPO grading completions/s, one worker vs the pool, and where the time goes",
    )
    p.add_argument(
        "--tasks",
        type=int_at_least(1),
        default=None,
        help="tasks per config (--ray: 8, --throughput: 16)",
    )
    p.add_argument(
        "--group", type=int_at_least(1), default=8, help="completions per task (--throughput)"
    )
    p.add_argument(
        "--mix",
        choices=("issue", "distinct"),
        default="issue",
        help="--throughput completions: issue = half reference, half no-op per group; "
        "distinct = no two alike (each graded in full)",
    )
    p.add_argument(
        "--no-reference", action="store_true", help="skip the unoptimised path (--throughput)"
    )
    p.add_argument(
        "--repeats",
        type=int_at_least(1),
        default=1,
        help="measurements per configuration, pool sizes alternating (--throughput)",
    )
    p.add_argument(
        "--env-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="gym.make keyword argument of --env (--throughput; bank=real: the real "
        "projects' tasks), VALUE parsed as JSON when it is; repeatable",
    )
    p.add_argument(
        "--no-cold",
        action="store_true",
        help="skip the cold rows (--throughput; measured by default for repository tasks)",
    )
    p.add_argument(
        "--no-plain",
        action="store_true",
        help="skip the plain-pytest baseline (--throughput; by default for repository tasks)",
    )
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser(
        "serve",
        help="serve an env over OpenEnv's HTTP/WebSocket protocol + dashboard",
        description="Serve one id over OpenEnv's HTTP/WebSocket protocol, with a "
        "dashboard at / (needs the serve extra).",
    )
    p.add_argument("env_id", metavar="ENV_ID", help="a registered id, e.g. Forge/Bugfix-v0")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    p.add_argument("--port", type=port_number, default=8000, help="TCP port")
    p.add_argument(
        "--max-sessions",
        type=int_at_least(1),
        default=64,
        help="session cap (HTTP + WebSocket)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="close sessions idle for S seconds; 0 never",
    )
    p.add_argument(
        "--curriculum", action="store_true", help="a shared pass@k scheduler picks the tasks"
    )
    p.add_argument(
        "--results",
        action="append",
        metavar="RESULTS",
        help="a results file for the dashboard's Leaderboard tab; repeatable",
    )
    p.add_argument(
        "--env-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="gym.make keyword argument, VALUE parsed as JSON when it is; repeatable",
    )
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "plot",
        help="plots of eval results, curriculum state and learning reports",
        description="episode: the dashboard of a `forgegym eval` results file. curriculum: "
        "pass@k per task and tier sizes over time from a curriculum state file. learning: "
        "a benchmarks/learning.py report. The output's suffix picks the format (.png, "
        ".pdf, .svg, ...). Needs matplotlib (the plot extra).",
    )
    p.add_argument(
        "kind", choices=["episode", "curriculum", "learning", "telemetry"], help="what to plot"
    )
    p.add_argument(
        "input",
        metavar="INPUT",
        help="RESULTS.json (episode), STATE.json (curriculum) or a learning report (learning)",
    )
    p.add_argument(
        "-o", "--output", required=True, metavar="PATH", help="file to write; suffix = format"
    )
    p.add_argument(
        "--episode",
        type=int_at_least(0),
        default=None,
        metavar="INDEX",
        help="plot only this episode of the results (default: all)",
    )
    p.set_defaults(func=cmd_plot)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; a user error is one line on stderr and exit status 2 (1 for
    errors met while working), never a traceback. Set ``FORGEGYM_TRACEBACK=1`` to see
    the traceback anyway."""
    debug = os.environ.get("FORGEGYM_TRACEBACK") == "1"
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args))
    except CLIError as exc:
        if debug:
            raise
        print(f"forgegym: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("forgegym: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`forgegym list --json | head -1`): stop quietly, as a
        # Unix tool does. Point stdout at /dev/null so the interpreter's final flush
        # does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        if debug or not is_user_error(exc):
            raise
        print(f"forgegym: {one_line(str(exc)) or type(exc).__name__}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
