"""``GET /families`` (the registered families, their ids, whether they have statistics)
and ``GET /{family}/stats`` (e.g. ``/oversight/stats``: the registered family's
statistics hook; 404 naming the families that have statistics when there is no such
family or it has none)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from forgegym.server.responses import not_found
from forgegym.server.service import Service

__all__ = ["FamilyInfo", "family_stats", "router"]

router = APIRouter()


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


@router.get("/families", response_model=list[FamilyInfo], tags=["Families"])
async def families(service: Service) -> Any:
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


@router.get("/{family}/stats", tags=["Families"])
async def stats(family: str) -> Any:
    result, known = await run_in_threadpool(family_stats, family)
    if result is None:
        return not_found(
            f"no registered family {family!r} has statistics; families with "
            f"statistics: {known or 'none'}"
        )
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    return result
