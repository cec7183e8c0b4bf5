"""``GET /curriculum/stats | /curriculum/queue | /curriculum/curve``: the shared pass@k
scheduler of ``forgegym serve --curriculum``; 404 when the server runs without one."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from forgegym.server.responses import not_found
from forgegym.server.service import ForgeService, Service

__all__ = ["CurriculumCurve", "CurriculumQueue", "CurriculumRow", "CurvePoint", "router"]

router = APIRouter()


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


def _no_curriculum(service: ForgeService) -> JSONResponse:
    return not_found(
        f"this server runs {service.env_id} without a curriculum; start it with "
        "`forgegym serve ID --curriculum` to let a pass@k scheduler pick the tasks"
    )


@router.get("/curriculum/stats", tags=["Curriculum"])
async def curriculum_stats(service: Service) -> Any:
    scheduler = service.scheduler
    if scheduler is None:
        return _no_curriculum(service)
    return scheduler.stats()


@router.get("/curriculum/queue", response_model=CurriculumQueue, tags=["Curriculum"])
async def curriculum_queue(service: Service, limit: int = Query(200, ge=1, le=10_000)) -> Any:
    scheduler = service.scheduler
    if scheduler is None:
        return _no_curriculum(service)
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


@router.get("/curriculum/curve", response_model=CurriculumCurve, tags=["Curriculum"])
async def curriculum_curve(service: Service, window: int = Query(20, ge=1, le=10_000)) -> Any:
    scheduler = service.scheduler
    if scheduler is None:
        return _no_curriculum(service)
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
