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

from forgegym.cli import bench, doctor, leaderboard, plot, serve, tasks
from forgegym.cli import eval as eval_command
from forgegym.cli import list as list_command
from forgegym.cli.common import CLIError, Parser, is_user_error, one_line

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
    """The ``forgegym`` parser: each command's module adds its own options."""
    from forgegym import __version__

    parser = Parser(prog="forgegym", description=_DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"forgegym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    list_command.add_parser(sub)
    doctor.add_parser(sub)
    eval_command.add_parser(sub)
    leaderboard.add_parser(sub)
    tasks.add_parser(sub)
    bench.add_parser(sub)
    serve.add_parser(sub)
    plot.add_parser(sub)
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
