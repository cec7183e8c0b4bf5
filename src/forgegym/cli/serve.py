"""``forgegym serve``: one id over OpenEnv's HTTP/WebSocket protocol, with a dashboard."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from forgegym.cli.common import (
    CLIError,
    check_env,
    check_listen,
    checked_env_ids,
    one_line,
    parse_kwargs,
    require_extra,
)

__all__ = ["cmd_serve"]


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
