"""``GET /tasks`` (a page of task summaries, never hidden checks or references) and
``POST /grader`` (completions graded as single-turn episodes of a task)."""

from __future__ import annotations

import threading
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool

from forgegym.server.models import (
    GradeRequest,
    GradeResponse,
    GradeResult,
    TasksResponse,
    TaskSummary,
)
from forgegym.server.responses import invalid, not_found
from forgegym.server.service import Service

__all__ = ["TaskSummaries", "router"]

DESCRIPTION_CHARS = 2000
#: Task summaries kept for the task browser (regenerating a task can take tens of ms).
SUMMARY_CACHE = 4096

router = APIRouter()


class TaskSummaries:
    """The task browser's summaries, by task id (at most :data:`SUMMARY_CACHE`, oldest
    dropped first); one per app, shared by its request threads."""

    def __init__(self) -> None:
        self._summaries: dict[str, TaskSummary] = {}
        self._lock = threading.Lock()

    def get(self, bank: Any, task_id: str) -> TaskSummary:
        with self._lock:
            cached = self._summaries.get(task_id)
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
        with self._lock:
            if len(self._summaries) >= SUMMARY_CACHE:
                self._summaries.pop(next(iter(self._summaries)))
            self._summaries[task_id] = made
        return made


_CACHE_LOCK = threading.Lock()


def _summaries(request: Request) -> TaskSummaries:
    """The app's summary cache (``app.state.task_summaries``), made on first use."""
    state = request.app.state
    with _CACHE_LOCK:
        cache: TaskSummaries | None = getattr(state, "task_summaries", None)
        if cache is None:
            cache = state.task_summaries = TaskSummaries()
    return cache


@router.get("/tasks", response_model=TasksResponse, tags=["Tasks"])
async def tasks(
    service: Service,
    request: Request,
    limit: int = Query(20, ge=1, le=100),
    offset: int = Query(0, ge=0, le=10_000),
    seed: int = Query(0, ge=0, le=2**32 - 1),
    difficulty: int | None = Query(None, ge=0, le=1000),
) -> Any:
    bank = service.task_bank
    if bank is None:
        return not_found(f"{service.env_id} has no task bank")
    levels = [int(level) for level in bank.difficulty_levels]
    if difficulty is not None and difficulty not in levels:
        return invalid(f"difficulty must be one of {levels}, got {difficulty}")
    summaries = _summaries(request)

    def listing() -> list[TaskSummary]:
        ids = bank.task_ids(offset + limit, seed=seed, difficulty=difficulty)
        return [summaries.get(bank, task_id) for task_id in list(ids)[offset:]]

    page = await run_in_threadpool(listing)
    size = len(bank) if hasattr(bank, "__len__") else None
    return TasksResponse(
        env_id=service.env_id, bank_size=size, difficulty_levels=levels, tasks=page
    )


@router.post("/grader", response_model=GradeResponse, tags=["Grading"])
async def grader(service: Service, request: GradeRequest) -> Any:
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
        return invalid(outcome)
    return GradeResponse(task_id=request.task_id, results=outcome)
