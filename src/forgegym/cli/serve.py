"""``forgegym serve``: one id over OpenEnv's HTTP/WebSocket protocol, with a dashboard."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from forgegym.cli.common import (
    CLIError,
    Commands,
    check_env,
    check_listen,
    checked_env_ids,
    int_at_least,
    one_line,
    parse_kwargs,
    port_number,
    require_extra,
)

__all__ = ["add_parser", "cmd_serve"]


def add_parser(sub: Commands) -> None:
    """Add ``serve`` with its options to the ``forgegym`` parser."""
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


def cmd_serve(args: argparse.Namespace) -> int:
    for module in ("fastapi", "uvicorn"):
        require_extra(module, "serve", "serve")
    known = checked_env_ids(None)
    if args.env_id not in known:
        raise CLIError(f"unknown ENV_ID {args.env_id!r}; registered: {', '.join(known)}")
    env_kwargs = parse_kwargs(args.env_kwarg)
    check_env(args.env_id, env_kwargs)
    check_listen(args.host, args.port)
    results = list(args.results or [])
    if results:  # a bad file is a clear error now, not a 422 in the browser later
        from forgegym.play.leaderboard import load_results

        try:
            load_results(results)
        except ValueError as exc:
            raise CLIError(f"--results {one_line(str(exc))}") from None
    from forgegym.server import serve

    serve(
        args.env_id,
        host=args.host,
        port=args.port,
        env_kwargs=env_kwargs,
        max_sessions=args.max_sessions,
        idle_timeout_s=args.idle_timeout if args.idle_timeout > 0 else None,
        curriculum=args.curriculum,
        results=results,
    )
    return 0
