"""The environment behind the server's endpoints (:class:`ForgeService`: sessions, schema,
metadata, the grading env), how a route reaches it (:data:`Service`, a FastAPI
dependency on the app's ``state.service``) and :func:`jsonable`, which every response's
data goes through."""

from __future__ import annotations

import contextlib
import inspect
import math
import threading
from collections.abc import Callable
from typing import Annotated, Any

import gymnasium as gym
from fastapi import Depends, Request
from pydantic import BaseModel

from forgegym.server.models import (
    EnvironmentMetadata,
    ForgeAction,
    ForgeObservation,
    ForgeState,
    SchemaResponse,
)
from forgegym.server.sessions import Session, SessionManager

__all__ = ["ForgeService", "Service", "forge_service", "jsonable"]


def jsonable(value: Any, _depth: int = 0) -> Any:
    """``value`` as strict JSON data: numpy scalars unwrapped, models dumped, non-finite
    floats as ``None`` (a response must never fail to serialise)."""
    if _depth > 64:
        return str(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, _depth + 1) for v in value]
    if isinstance(value, BaseModel):
        return jsonable(value.model_dump(mode="json"), _depth + 1)
    item = getattr(value, "item", None)
    if callable(item):  # numpy scalar
        with contextlib.suppress(Exception):
            return jsonable(item(), _depth + 1)
    tolist = getattr(value, "tolist", None)
    if callable(tolist):  # numpy array
        with contextlib.suppress(Exception):
            return jsonable(tolist(), _depth + 1)
    return str(value)


class ForgeService:
    """The environment behind the endpoints: sessions, schema, metadata, grading env.

    Args:
        env_id: a registered forgegym id.
        env_kwargs: keyword arguments for ``gym.make``.
        max_sessions: the session cap (HTTP and WebSocket together).
        idle_timeout_s: idle sessions are closed after this long (``None``: never).
        curriculum: let a shared pass@k scheduler pick every session's tasks (seeded
            resets then follow the scheduler, not the seed); enables ``/curriculum/*``.
        curriculum_config: :class:`~forgegym.curricula.CurriculumConfig` fields.
    """

    def __init__(
        self,
        env_id: str,
        *,
        env_kwargs: dict[str, Any] | None = None,
        max_sessions: int = 64,
        idle_timeout_s: float | None = 600.0,
        curriculum: bool = False,
        curriculum_config: dict[str, Any] | None = None,
    ) -> None:
        import forgegym  # noqa: F401  (registers the ids)

        if env_id not in gym.registry:
            from forgegym.family.registration import env_ids

            raise ValueError(f"env_id: {env_id!r} is not registered; known: {env_ids()}")
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        probe = gym.make(env_id, **self.env_kwargs)
        try:
            base = probe.unwrapped
            _, info = probe.reset(seed=0)
            self.family: str = str(info.get("family", getattr(base, "family", "")))
            self.task_bank = getattr(base, "task_bank", None)
            self.action_max_chars = int(probe.action_space.max_length)  # type: ignore[attr-defined]
            self.observation_max_chars = int(probe.observation_space.max_length)  # type: ignore[attr-defined]
            self.action_schema: dict[str, Any] = jsonable(info.get("action_schema") or {})
            self.doc = inspect.getdoc(type(base)) or env_id
        finally:
            probe.close()
        self.scheduler: Any = None
        if curriculum:
            from forgegym.curricula import CurriculumScheduler

            if self.task_bank is None:
                raise ValueError(f"curriculum: {env_id} has no task bank to schedule")
            self.scheduler = CurriculumScheduler(self.task_bank, curriculum_config)
        self.sessions = SessionManager(
            self._make_env, max_sessions=max_sessions, idle_timeout_s=idle_timeout_s
        )
        self._grader_env: gym.Env[Any, Any] | None = None
        self._grader_lock = threading.Lock()

    # ---------------------------------------------------------------- envs
    def _make_env(self) -> gym.Env[Any, Any]:
        env = gym.make(self.env_id, **self.env_kwargs)
        if self.scheduler is not None:
            from forgegym.curricula import PassAtKCurriculum

            env = PassAtKCurriculum(env, scheduler=self.scheduler)
        return env

    def grader_env(self) -> gym.Env[Any, Any]:
        """A single-turn env for ``/grader`` (call under ``grader_lock``)."""
        if self._grader_env is None:
            kwargs = {**self.env_kwargs, "max_steps": 1}
            self._grader_env = gym.make(self.env_id, **kwargs)
        return self._grader_env

    @property
    def grader_lock(self) -> threading.Lock:
        return self._grader_lock

    def close(self) -> None:
        with self._grader_lock:
            if self._grader_env is not None:
                self._grader_env.close()
                self._grader_env = None

    # ------------------------------------------------------------- payloads
    def schema(self) -> SchemaResponse:
        action = ForgeAction.model_json_schema()
        text = action["properties"]["text"]
        text["maxLength"] = self.action_max_chars
        text["contentMediaType"] = "application/json"
        text["contentSchema"] = self.action_schema
        observation = ForgeObservation.model_json_schema()
        observation["properties"]["prompt"]["maxLength"] = self.observation_max_chars
        return SchemaResponse(
            action=action, observation=observation, state=ForgeState.model_json_schema()
        )

    def metadata(self) -> EnvironmentMetadata:
        from forgegym import __version__

        return EnvironmentMetadata(
            name=self.env_id,
            description=self.doc.split("\n\n", 1)[0].replace("\n", " "),
            readme_content=self.doc,
            version=__version__,
            author="forgegym",
        )

    def state(self, session: Session) -> ForgeState:
        info = session.last_info
        return ForgeState(
            episode_id=session.session_id,
            step_count=session.step_count,
            env_id=self.env_id,
            task_id=info.get("task_id"),
            family=info.get("family", self.family),
            difficulty=info.get("difficulty"),
            max_steps=info.get("max_steps"),
            done=session.done,
            total_reward=session.total_reward,
        )

    # --------------------------------------------------------------- actions
    async def reset(
        self, session: Session, seed: int | None, options: dict[str, Any] | None
    ) -> dict[str, Any]:
        def run() -> tuple[str, dict[str, Any]]:
            return session.env.reset(seed=seed, options=options)

        prompt, info = await self.sessions.call(session, run)
        session.step_count = 0
        session.total_reward = 0.0
        session.done = False
        session.last_info = jsonable(info)
        obs = ForgeObservation(prompt=prompt, info=session.last_info)
        return _envelope(obs, session)

    def _step_fn(self, session: Session, text: str) -> Callable[[], dict[str, Any]]:
        def run() -> dict[str, Any]:
            if not session.last_info:
                raise RuntimeError("call reset before step")
            prompt, reward, terminated, truncated, info = session.env.step(text)
            session.step_count += 1
            session.total_reward += float(reward)
            session.done = bool(terminated or truncated)
            session.last_info = jsonable(info)
            obs = ForgeObservation(
                prompt=prompt,
                info=session.last_info,
                terminated=bool(terminated),
                truncated=bool(truncated),
                done=session.done,
                reward=float(reward),
            )
            return _envelope(obs, session)

        return run

    async def step(
        self,
        session: Session,
        action: ForgeAction,
        *,
        request_id: str | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        return await self.sessions.call_once(
            session, request_id, self._step_fn(session, action.text), timeout_s=timeout_s
        )


def _envelope(obs: ForgeObservation, session: Session) -> dict[str, Any]:
    """OpenEnv's ``serialize_observation``: reward/done/metadata beside the observation."""
    return {
        "observation": obs.model_dump(exclude={"reward", "done", "metadata"}),
        "reward": obs.reward,
        "done": obs.done,
        "metadata": {"episode_id": session.session_id, "step": session.step_count},
    }


def forge_service(request: Request) -> ForgeService:
    """The service of the app serving ``request`` (set by ``create_app``)."""
    service: ForgeService = request.app.state.service
    return service


#: A route's parameter that receives the app's :class:`ForgeService`.
Service = Annotated[ForgeService, Depends(forge_service)]
