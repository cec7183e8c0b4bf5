"""Wire models of ``forgegym serve``: OpenEnv's request/response shapes, forgegym's
action, observation and state.

The request and response envelopes follow OpenEnv (``openenv.core.env_server.types``):
``POST /reset`` takes ``{"seed", "episode_id", ...}``, ``POST /step`` takes
``{"action", "timeout_s", "request_id"}``; both answer
``{"observation": {...}, "reward", "done", "metadata"}``. The WebSocket ``/ws`` speaks
``{"type": "reset" | "step" | "state" | "close", "data": ...}`` in and
``{"type": "observation" | "state" | "error", "data": ...}`` out, with OpenEnv's error
codes (:class:`WSErrorCode`).

A forgegym action is text (the policy's reply, parsed by the family's action protocol),
so the wire action is ``{"text": "..."}``; ``/schema`` advertises the family's action
models as the ``contentSchema`` of that string.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "EnvironmentMetadata",
    "ForgeAction",
    "ForgeObservation",
    "ForgeState",
    "GradeRequest",
    "GradeResponse",
    "GradeResult",
    "HealthResponse",
    "ResetRequest",
    "ResetResponse",
    "SchemaResponse",
    "SessionCloseRequest",
    "StepRequest",
    "StepResponse",
    "TaskSummary",
    "TasksResponse",
    "WSErrorCode",
]

#: Longest id a client may choose (OpenEnv's limit on ``episode_id`` / ``request_id``).
MAX_ID_CHARS = 255


class WSErrorCode(str, Enum):
    """OpenEnv's WebSocket error codes (also used as ``code`` in HTTP error bodies)."""

    INVALID_JSON = "INVALID_JSON"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    CAPACITY_REACHED = "CAPACITY_REACHED"
    FACTORY_ERROR = "FACTORY_ERROR"
    SESSION_ERROR = "SESSION_ERROR"


class ForgeAction(BaseModel):
    """One step's action: the policy's reply text, exactly what ``env.step`` takes."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(
        description="The action text: a JSON action (or list of actions), optionally in a "
        "```json fenced block after free-form reasoning. Parsed by the family's action "
        "protocol; an unparseable text costs a format penalty, never an error."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Ignored by the env.")


class ForgeObservation(BaseModel):
    """What ``reset``/``step`` return: the prompt and Gymnasium's ``info``."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(description="The observation: a self-contained prompt.")
    info: dict[str, Any] = Field(
        default_factory=dict,
        description="Gymnasium's info dict (task_id, family, step, messages, and on the "
        "last step score, success and reward_breakdown).",
    )
    terminated: bool = False
    truncated: bool = False
    done: bool = False
    reward: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ForgeState(BaseModel):
    """OpenEnv's ``State`` (``episode_id``, ``step_count``) plus the episode's position."""

    model_config = ConfigDict(extra="allow")

    episode_id: str | None = None
    step_count: int = Field(default=0, ge=0)
    env_id: str
    task_id: str | None = None
    family: str | None = None
    difficulty: int | None = None
    max_steps: int | None = None
    done: bool = False
    total_reward: float = 0.0


class ResetRequest(BaseModel):
    """``POST /reset``: OpenEnv's fields plus Gymnasium's ``options``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"seed": 42, "episode_id": "episode-001"}, {}]},
    )

    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    episode_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="Session id: a new id opens a session, a known one resets it. "
        "Default: a fresh id (returned in metadata.episode_id).",
    )
    options: dict[str, Any] | None = Field(
        default=None, description="Gymnasium reset options: task_id or difficulty."
    )


class ResetResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    observation: dict[str, Any]
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] | None = None


class StepRequest(BaseModel):
    """``POST /step``: OpenEnv's fields plus ``episode_id`` naming the HTTP session."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "episode_id": "episode-001",
                    "action": {"text": '{"action": "submit"}'},
                    "timeout_s": 30.0,
                    "request_id": "r1",
                }
            ]
        },
    )

    action: ForgeAction
    episode_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    timeout_s: float | None = Field(default=None, gt=0, le=86_400)
    request_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="Idempotency key: a repeated request_id returns the first answer "
        "without stepping again.",
    )


class StepResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    observation: dict[str, Any]
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] | None = None


class SessionCloseRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episode_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)


class EnvironmentMetadata(BaseModel):
    """OpenEnv's ``EnvironmentMetadata``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    readme_content: str | None = None
    version: str | None = None
    author: str | None = None
    documentation_url: str | None = None


class SchemaResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: dict[str, Any]
    observation: dict[str, Any]
    state: dict[str, Any]


class HealthResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["healthy", "unhealthy", "degraded"] = "healthy"
    active_sessions: int = 0
    max_sessions: int = 1


class TaskSummary(BaseModel):
    """What the task browser shows: never hidden checks or the reference."""

    task_id: str
    family: str
    difficulty: int
    title: str
    description: str


class TasksResponse(BaseModel):
    env_id: str
    bank_size: int | None
    difficulty_levels: list[int]
    tasks: list[TaskSummary]


class GradeRequest(BaseModel):
    """``POST /grader``: grade completions as single-turn episodes of one task."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1, max_length=1000)
    completions: list[str] = Field(min_length=1, max_length=64)


class GradeResult(BaseModel):
    reward: float
    score: float
    success: bool
    reward_breakdown: dict[str, Any]
    action_error: str | None = None


class GradeResponse(BaseModel):
    task_id: str
    results: list[GradeResult]
