"""The episode schema: what ``forgegym eval`` and :func:`forgegym.play.rollouts.collect_rollouts`
record, what ``forgegym plot episode`` reads.

One model for every played episode, whoever played it (an evaluation on one env, a
batch of rollouts on a vector env)::

    {"format": "forgegym.episodes/1", "metadata": {...},
     "episodes": [{"env_id": str, "policy": str, "task_id": str,
                   "family": str | null, "difficulty": int | null,
                   "seed": int | null,          # the reset seed that picked the task
                   "index": int,                # order in which the episode started in its run
                   "env_index": int,            # which env of a vector env played it (0: single env)
                   "run": int,                  # which run of its task (eval --runs R: 0 .. R-1)
                   "initial_observation": str | null, "final_observation": str | null,
                   "score": float, "success": bool,
                   "total_reward": float, "length": int,   # totals, derived (written, not read)
                   "steps": [{"index": int,     # 1-based
                              "action": str,    # the text the policy sent
                              "reward": float, "terminated": bool, "truncated": bool,
                              "reward_breakdown": {...} | null,   # info["reward_breakdown"]
                              "info": {JSON-scalar entries of info},
                              "observation": str | null}, ...]}, ...]}

:meth:`Results.load` / :meth:`Results.from_data` also read the two formats this one
replaced, migrating them in memory (``metadata["migrated_from"]`` says which):

* ``"forgegym.eval/1"``: what ``forgegym eval`` wrote before (no step or episode
  index, ``action`` could be ``null``);
* a bare JSON list of trajectories: what ``forgegym.play.rollouts.save_trajectories`` wrote
  (``episode`` for ``index``, ``null`` score/success for an env that reported none).

Anything else raises ``ValueError`` saying what the input looks like. Write the new
format back with :meth:`Results.save`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, computed_field, model_validator

__all__ = [
    "EPISODES_FORMAT",
    "EVAL_FORMAT",
    "LEGACY_FORMATS",
    "Episode",
    "EvalEpisode",
    "EvalResults",
    "EvalStep",
    "Results",
    "Step",
    "describe",
    "load_episodes",
    "save_episodes",
]

#: The ``format`` of a results file written now.
EPISODES_FORMAT = "forgegym.episodes/1"
#: What ``forgegym eval`` wrote before the episode schema was shared (read and migrated).
EVAL_FORMAT = "forgegym.eval/1"
#: Formats :meth:`Results.from_data` migrates, with what wrote them.
LEGACY_FORMATS: dict[str, str] = {
    EVAL_FORMAT: "forgegym eval in forgegym 0.1.0",
    "trajectories": "forgegym.play.rollouts.save_trajectories in forgegym 0.1.0 (a JSON list)",
}
_CURRICULUM_FORMAT = "forgegym.curriculum/1"
_LEARNING_KIND_PREFIX = "forgegym.integrations.learning"


class Step(BaseModel):
    """One environment step: the action the policy sent and what the env returned."""

    index: int = Field(
        default=0, ge=0, description="1-based step number within the episode (0: unset)."
    )
    action: str = Field(default="", description="The action text the policy sent.")
    reward: float
    terminated: bool = False
    truncated: bool = False
    reward_breakdown: dict[str, Any] | None = Field(
        default=None, description="info['reward_breakdown'] as the env reported it (final steps)."
    )
    info: dict[str, Any] = Field(
        default_factory=dict,
        description="The JSON-scalar entries of the step's info (step, task_id, family, "
        "difficulty, score, success, action_error, ...); never messages or the breakdown.",
    )
    observation: str | None = Field(
        default=None, description="The observation the action answered, when kept."
    )


class Episode(BaseModel):
    """One played episode: its task, who played it, its steps and its totals."""

    env_id: str
    policy: str
    task_id: str
    family: str | None = None
    difficulty: int | None = None
    seed: int | None = Field(
        default=None, description="The reset seed that picked the task (None: unseeded)."
    )
    index: int = Field(
        default=0, ge=0, description="Order in which the episode started in its run (0-based)."
    )
    env_index: int = Field(
        default=0, ge=0, description="Which env of a vector env played it (0 for a single env)."
    )
    run: int = Field(
        default=0,
        ge=0,
        description="Which run of its task this is (`forgegym eval --runs R` plays each task "
        "R times: runs 0 .. R-1).",
    )
    initial_observation: str | None = None
    final_observation: str | None = None
    steps: list[Step] = Field(default_factory=list)
    score: float = Field(description="info['score'] of the last step (0.0 if none).")
    success: bool = Field(description="info['success'] of the last step (False if none).")

    @model_validator(mode="after")
    def _number_steps(self) -> Episode:
        for position, step in enumerate(self.steps, start=1):
            if step.index == 0:
                step.index = position
            elif step.index != position:
                raise ValueError(f"steps[{position - 1}].index is {step.index}, not {position}")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_reward(self) -> float:
        """The sum of the step rewards (the episode's return)."""
        return float(sum(step.reward for step in self.steps))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def length(self) -> int:
        """The number of steps."""
        return len(self.steps)

    @property
    def done(self) -> bool:
        """Whether the last step ended the episode (terminated or truncated)."""
        return bool(self.steps) and (self.steps[-1].terminated or self.steps[-1].truncated)

    @property
    def reward_breakdown(self) -> dict[str, Any] | None:
        """The last step's breakdown, if the env reported one."""
        return self.steps[-1].reward_breakdown if self.steps else None

    @property
    def group(self) -> str:
        """The family, else the env id: what :func:`forgegym.play.plots.plot_scores` groups by."""
        return self.family or self.env_id or "unknown"


class Results(BaseModel):
    """A results file: episodes and free-form metadata (command, seed, family reports)."""

    format: str = EPISODES_FORMAT
    metadata: dict[str, Any] = Field(default_factory=dict)
    episodes: list[Episode] = Field(default_factory=list)

    def save(self, path: str | Path) -> Path:
        """Write as JSON in the current format (creating parent folders); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = self.model_copy(update={"format": EPISODES_FORMAT}).model_dump(mode="json")
        # json, not model_dump_json: observations may hold lone surrogates (any Python
        # str), which pydantic cannot encode and json escapes (ASCII output, exact reload).
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Results:
        """Read a results file, migrating the older formats (see the module docstring).

        Raises:
            ValueError: not JSON, or not a results file (the message says what it is).
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: not a JSON file ({exc})") from None
        return cls.from_data(data)

    @classmethod
    def from_data(cls, data: Any) -> Results:
        """A :class:`Results` from parsed JSON, a model, or a list of episodes.

        Raises:
            ValueError: anything that is not results (a curriculum state, a learning
                report, a file with missing or ill-typed fields), saying what it is.
        """
        if isinstance(data, Results):
            return data
        if isinstance(data, Mapping):
            fmt = data.get("format")
            if fmt == EVAL_FORMAT or (fmt is None and "episodes" in data):
                return _validate(_from_eval_v1(data), "results")
            if fmt != EPISODES_FORMAT:
                raise ValueError(
                    f"results: expected forgegym eval results (format {EPISODES_FORMAT!r}, "
                    f"written by `forgegym eval` or Results.save), got {describe(data)}"
                )
            return _validate(data, "results")
        if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
            if all(isinstance(item, Episode) for item in data):
                return cls(episodes=list(data))
            if not all(isinstance(item, (Mapping, Episode)) for item in data):
                raise ValueError(f"results: expected a list of episodes, got {describe(data)}")
            return _validate(_from_trajectories(data), "trajectories")
        raise ValueError(
            "results: expected forgegym results (a path's JSON, a dict, Results) or a list "
            f"of episodes, got {describe(data)}"
        )


def describe(data: Any) -> str:
    """What a JSON input looks like, and which command reads it (for error messages)."""
    if isinstance(data, Mapping):
        fmt = data.get("format")
        if fmt == _CURRICULUM_FORMAT:
            return "a curriculum state (plot it with `forgegym plot curriculum`)"
        if fmt in (EPISODES_FORMAT, EVAL_FORMAT) or (fmt is None and "episodes" in data):
            return "eval results (plot them with `forgegym plot episode`)"
        if str(data.get("kind", "")).startswith(_LEARNING_KIND_PREFIX):
            return "a learning report (plot it with `forgegym plot learning`)"
        if fmt is not None:
            return f"a file of format {fmt!r}"
        keys = ", ".join(sorted(map(str, data))[:6])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(data, list):
        return "a list" if data else "an empty list"
    return f"a JSON {type(data).__name__}"


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "(top level)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {error['msg']}{more}"


def _validate(data: Mapping[str, Any], what: str) -> Results:
    try:
        return Results.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"results: invalid {what} at {_first_error(exc)}") from None


# ------------------------------------------------------------------ migrations
def _from_eval_v1(data: Mapping[str, Any]) -> dict[str, Any]:
    """``forgegym.eval/1`` -> the current format: actions ``null`` -> ``""``; each
    episode's index is its position among its (env, policy) run's episodes."""
    runs: dict[tuple[Any, Any], int] = {}
    episodes: list[Any] = []
    for episode in data.get("episodes") or []:
        if not isinstance(episode, Mapping):
            episodes.append(episode)  # let validation name it
            continue
        key = (episode.get("env_id"), episode.get("policy"))
        index = runs[key] = runs.get(key, -1) + 1
        steps = [
            {**step, "action": step.get("action") or ""} if isinstance(step, Mapping) else step
            for step in episode.get("steps") or []
        ]
        episodes.append({**episode, "index": episode.get("index", index), "steps": steps})
    metadata = dict(data.get("metadata") or {})
    if data.get("format") != EPISODES_FORMAT:
        metadata.setdefault("migrated_from", data.get("format") or "unversioned")
    return {"format": EPISODES_FORMAT, "metadata": metadata, "episodes": episodes}


def _from_trajectories(items: Sequence[Any]) -> dict[str, Any]:
    """A list of old ``Trajectory`` dicts (or current episodes) -> the current format."""
    episodes: list[Any] = []
    migrated = False
    for item in items:
        if isinstance(item, Episode):
            episodes.append(item)
            continue
        if "episode" in item and "index" not in item:  # an old Trajectory
            migrated = True
            item = {key: value for key, value in item.items() if key != "episode"} | {
                "index": item["episode"],
                "env_id": item.get("env_id") or "unknown",
                "policy": item.get("policy") or "unknown",
                "score": item.get("score") or 0.0,
                "success": bool(item.get("success")),
            }
        episodes.append(item)
    metadata = {"migrated_from": "trajectories"} if migrated else {}
    return {"format": EPISODES_FORMAT, "metadata": metadata, "episodes": episodes}


# ------------------------------------------------------------------ convenience
def save_episodes(episodes: Sequence[Episode], path: str | Path, **metadata: Any) -> Path:
    """Write ``episodes`` (and ``metadata``) as a results file; returns the path."""
    return Results(episodes=list(episodes), metadata=dict(metadata)).save(path)


def load_episodes(path: str | Path) -> list[Episode]:
    """The episodes of a results file (any format :meth:`Results.load` reads)."""
    return Results.load(path).episodes


#: Names from before the schema was shared by eval and rollouts (same classes).
EvalStep = Step
EvalEpisode = Episode
EvalResults = Results
