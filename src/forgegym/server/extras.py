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

import threading
from typing import Any, Protocol

from fastapi import FastAPI, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from forgegym.server.models import (
    GradeRequest,
    GradeResponse,
    GradeResult,
    TasksResponse,
    TaskSummary,
    WSErrorCode,
)

__all__ = ["ExtrasService", "add_extra_routes", "family_stats"]

DESCRIPTION_CHARS = 2000
#: Task summaries kept for the task browser (regenerating a task can take tens of ms).
SUMMARY_CACHE = 4096


class ExtrasService(Protocol):
    """What the extra routes read of the service behind the app (``app.ForgeService``
    is one): named here so that this module needs nothing of ``app``, which imports it.
    """

    env_id: str
    task_bank: Any
    scheduler: Any

    @property
    def grader_lock(self) -> threading.Lock: ...

    def grader_env(self) -> Any: ...


def _not_found(message: str) -> JSONResponse:
    return JSONResponse(status_code=404, content={"detail": message})


def _invalid(message: str) -> JSONResponse:
    return JSONResponse(
        status_code=422, content={"detail": message, "code": WSErrorCode.VALIDATION_ERROR.value}
    )


def family_stats(name: str) -> tuple[Any, list[str]]:
    """The statistics of the registered family ``name`` (a pydantic model or JSON data),
    or ``None``; plus the names of the families that do have statistics."""
    from forgegym.server.families import stats_hooks

    hooks = stats_hooks()
    hook = hooks.get(name)
    return (hook() if hook is not None else None), sorted(hooks)


class FamilyInfo(BaseModel):
    name: str
    env_ids: list[str]
    has_stats: bool
    served: bool


class CurriculumRow(BaseModel):
    task_id: str
    tier: str
    difficulty: int | None
    successes: float
    trials: int
    pass_at_k: float
    learnability: float
    last_seen: int


class CurriculumQueue(BaseModel):
    episode: int
    k: int
    tasks: list[CurriculumRow]


class CurvePoint(BaseModel):
    episode: int
    success: float
    rolling_success: float
    difficulty: int | None
    too_easy: int
    learnable: int
    too_hard: int


class CurriculumCurve(BaseModel):
    window: int
    points: list[CurvePoint]


def add_extra_routes(app: FastAPI, service: ExtrasService) -> None:
    """Register the extra endpoints of ``service`` on ``app``."""

    summaries: dict[str, TaskSummary] = {}

    summaries_lock = threading.Lock()

    def summary(bank: Any, task_id: str) -> TaskSummary:
        with summaries_lock:
            cached = summaries.get(task_id)
        if cached is not None:
            return cached
        task = bank.get(task_id)
        made = TaskSummary(
            task_id=task.task_id,
            family=task.family,
            difficulty=task.difficulty,
            title=task.title,
            description=task.description[:DESCRIPTION_CHARS],
        )
        with summaries_lock:
            if len(summaries) >= SUMMARY_CACHE:
                summaries.pop(next(iter(summaries)))
            summaries[task_id] = made
        return made

    @app.get("/tasks", response_model=TasksResponse, tags=["Tasks"])
    async def tasks(
        limit: int = Query(20, ge=1, le=100),
        offset: int = Query(0, ge=0, le=10_000),
        seed: int = Query(0, ge=0, le=2**32 - 1),
        difficulty: int | None = Query(None, ge=0, le=1000),
    ) -> Any:
        bank = service.task_bank
        if bank is None:
            return _not_found(f"{service.env_id} has no task bank")
        levels = [int(level) for level in bank.difficulty_levels]
        if difficulty is not None and difficulty not in levels:
            return _invalid(f"difficulty must be one of {levels}, got {difficulty}")

        def listing() -> list[TaskSummary]:
            ids = bank.task_ids(offset + limit, seed=seed, difficulty=difficulty)
            return [summary(bank, task_id) for task_id in list(ids)[offset:]]

        page = await run_in_threadpool(listing)
        size = len(bank) if hasattr(bank, "__len__") else None
        return TasksResponse(
            env_id=service.env_id, bank_size=size, difficulty_levels=levels, tasks=page
        )

    @app.post("/grader", response_model=GradeResponse, tags=["Grading"])
    async def grader(request: GradeRequest) -> Any:
        def grade() -> list[GradeResult] | str:
            with service.grader_lock:
                env = service.grader_env()
                results = []
                for completion in request.completions:
                    try:
                        env.reset(options={"task_id": request.task_id})
                    except ValueError as exc:
                        return str(exc)
                    _, reward, _, _, info = env.step(completion)
                    results.append(
                        GradeResult(
                            reward=float(reward),
                            score=float(info["score"]),
                            success=bool(info["success"]),
                            reward_breakdown=info["reward_breakdown"],
                            action_error=info.get("action_error"),
                        )
                    )
                return results

        outcome = await run_in_threadpool(grade)
        if isinstance(outcome, str):
            return _invalid(outcome)
        return GradeResponse(task_id=request.task_id, results=outcome)

    def _scheduler() -> Any:
        return service.scheduler

    no_curriculum = (
        f"this server runs {service.env_id} without a curriculum; start it with "
        "`forgegym serve ID --curriculum` to let a pass@k scheduler pick the tasks"
    )

    @app.get("/curriculum/stats", tags=["Curriculum"])
    async def curriculum_stats() -> Any:
        scheduler = _scheduler()
        if scheduler is None:
            return _not_found(no_curriculum)
        return scheduler.stats()

    @app.get("/curriculum/queue", response_model=CurriculumQueue, tags=["Curriculum"])
    async def curriculum_queue(limit: int = Query(200, ge=1, le=10_000)) -> Any:
        scheduler = _scheduler()
        if scheduler is None:
            return _not_found(no_curriculum)
        state = scheduler.state_dict()
        rows = [
            CurriculumRow(
                task_id=task_id,
                tier=entry["tier"],
                difficulty=entry.get("difficulty"),
                successes=float(entry["successes"]),
                trials=int(entry["trials"]),
                pass_at_k=float(scheduler.pass_at_k_estimate(task_id)),
                learnability=float(scheduler.learnability(task_id)),
                last_seen=int(entry["last_seen"]),
            )
            for task_id, entry in state["tasks"].items()
        ]
        # The queue order: learnable tasks first, most learnable first.
        rows.sort(key=lambda r: (r.tier != "learnable", -r.learnability, r.task_id))
        return CurriculumQueue(
            episode=int(state["episode"]), k=int(state["config"]["k"]), tasks=rows[:limit]
        )

    @app.get("/curriculum/curve", response_model=CurriculumCurve, tags=["Curriculum"])
    async def curriculum_curve(window: int = Query(20, ge=1, le=10_000)) -> Any:
        scheduler = _scheduler()
        if scheduler is None:
            return _not_found(no_curriculum)
        history = scheduler.state_dict()["history"]
        points = []
        recent: list[float] = []
        for record in history:
            recent.append(float(record["success"]))
            if len(recent) > window:
                recent.pop(0)
            points.append(
                CurvePoint(
                    episode=int(record["episode"]),
                    success=float(record["success"]),
                    rolling_success=sum(recent) / len(recent),
                    difficulty=record.get("difficulty"),
                    too_easy=int(record["too_easy"]),
                    learnable=int(record["learnable"]),
                    too_hard=int(record["too_hard"]),
                )
            )
        return CurriculumCurve(window=window, points=points)

    @app.get("/families", response_model=list[FamilyInfo], tags=["Families"])
    async def families() -> Any:
        from forgegym.family import families as registered

        return [
            FamilyInfo(
                name=family.name,
                env_ids=list(family.env_ids),
                has_stats=family.report is not None or family.stats_function() is not None,
                served=service.env_id in family.env_ids,
            )
            for family in registered()
        ]

    @app.get("/{family}/stats", tags=["Families"])
    async def stats(family: str) -> Any:
        result, known = await run_in_threadpool(family_stats, family)
        if result is None:
            return _not_found(
                f"no registered family {family!r} has statistics; families with "
                f"statistics: {known or 'none'}"
            )
        if isinstance(result, BaseModel):
            return result.model_dump(mode="json")
        return result
