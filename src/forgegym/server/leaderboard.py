"""``GET /leaderboard``: the dashboard's Leaderboard tab, from results files.

``forgegym serve ENV_ID --results a.json --results b.json`` (or ``create_app(...,
results=[...])``) names the files; every request reads them again, so a file that
an evaluation rewrites shows up on the next load. The body is
:class:`forgegym.play.leaderboard.Leaderboard` (what ``forgegym leaderboard --json``
prints): 404 when the server was given no results files, 422 for a file that cannot
be read or a metric it cannot report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from forgegym.play.leaderboard import Leaderboard, build_leaderboard, load_results

__all__ = ["add_leaderboard_route"]


def add_leaderboard_route(app: FastAPI, results: Sequence[str | Path]) -> None:
    """Serve the leaderboard of the ``results`` files at ``GET /leaderboard``."""
    paths = [str(p) for p in results]

    def build(metric: str) -> Leaderboard:
        return build_leaderboard(load_results(paths), metric=metric)

    @app.get("/leaderboard", response_model=Leaderboard, tags=["Leaderboard"])
    async def leaderboard(
        metric: str = Query("best", max_length=32, description="best, score, success, pass@k"),
    ) -> Any:
        if not paths:
            return JSONResponse(
                status_code=404,
                content={
                    "detail": "no results files: start the server with "
                    "`forgegym serve ENV_ID --results RESULTS.json ...`"
                },
            )
        try:
            return await run_in_threadpool(build, metric)
        except ValueError as exc:
            return JSONResponse(status_code=422, content={"detail": str(exc)})
