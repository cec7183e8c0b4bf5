"""forgegym's endpoints beyond OpenEnv's: the task bank, offline grading, the
curriculum, and per-family statistics.

* ``GET /tasks?limit=&offset=&seed=&difficulty=``: a page of task summaries (never
  hidden checks or references).
* ``POST /grader`` ``{"task_id", "completions": [...]}``: each completion graded as a
  single-turn episode of that task (exactly what ``step`` returns with ``max_steps=1``).
* ``GET /curriculum/stats | /curriculum/queue | /curriculum/curve``: the shared pass@k
  scheduler (``forgegym serve --curriculum``); 404 when the server runs without one.
* ``GET /families``: the registered families, their ids, whether they have statistics.
* ``GET /{family}/stats`` (e.g. ``/oversight/stats``): the registered family's
  statistics hook; 404 naming the registered families when there is no such family
  or it has no statistics.
"""

from __future__ import annotations

from fastapi import FastAPI

from forgegym.server import curriculum_routes, family_routes, task_routes
from forgegym.server.family_routes import family_stats

__all__ = ["add_extra_routes", "family_stats"]


def add_extra_routes(app: FastAPI) -> None:
    """Register the extra endpoints on ``app`` (they reach its ``state.service``). The
    catch-all ``/{family}/stats`` goes last: ``/curriculum/stats`` is matched first."""
    app.include_router(task_routes.router)
    app.include_router(curriculum_routes.router)
    app.include_router(family_routes.router)
