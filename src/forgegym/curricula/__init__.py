"""The pass@k curriculum: estimator, task scheduler and Gymnasium wrapper.

* :func:`pass_at_k` — the unbiased estimator ``1 - C(n-c,k)/C(n,k)``.
* :class:`CurriculumScheduler` — per-task Beta posteriors, tiers on pass@k, quick
  retirement of never/always-solved tasks, a per-level prior learned online, frontier
  promotion, learnability-weighted sampling with learning-progress and staleness
  bonuses, replenishment from the family's bank, periodic re-estimation,
  ``state_dict``/``save``/``load``, ``stats()``.
* :class:`PassAtKCurriculum` — ``gymnasium.Wrapper`` that picks each episode's task.

State file schema (``CurriculumScheduler.save`` writes it; ``forgegym plot curriculum
STATE.json`` reads it). All keys are always present::

    {
      "format": "forgegym.curriculum/1",
      "config": {...CurriculumConfig fields...},
      "episode": int,                 # rollouts recorded so far (the x axis of plots)
      "next_seed": int, "since_reestimate": int,
      "replenishments": int, "reestimations": int,
      "exhausted_levels": [int | null, ...],
      "rng": {...numpy bit-generator state...},
      "tier_sizes": {"too_easy": int, "learnable": int, "too_hard": int},   # now
      "levels": [[level, successes, trials, episode], ...],  # level prior: recency-
                                      # weighted first-group outcomes per level
      "tasks": {
        "<task_id>": {
          "alpha": float, "beta": float,      # Beta posterior (decayed evidence + prior)
          "difficulty": int | null,
          "successes": float, "trials": int,  # raw totals, never decayed
          "last_seen": int, "added": int,     # episode numbers
          "tier": "too_easy" | "learnable" | "too_hard",
          "fast": float, "slow": float,   # EMAs of group success (learning progress)
          "history": [[episode, successes, trials], ...]   # per-task, over time
        }, ...
      },
      "history": [                     # one record per `record` call (episode or GRPO group)
        {"episode": int, "task_id": str, "successes": float, "trials": int,
         "success": float,             # successes / trials
         "difficulty": int | null,
         "too_easy": int, "learnable": int, "too_hard": int},   # tier sizes after it
        ...
      ],
      "timeline": [                    # tier sizes at each replenishment / re-estimation
        {"episode": int, "event": "replenish" | "reestimate", "pool": int,
         "too_easy": int, "learnable": int, "too_hard": int}, ...
      ]
    }

``history`` and ``timeline`` keep the last ``config.max_history`` entries. Files
written before ``levels``/``fast``/``slow`` existed still load (they start empty).
"""

from forgegym.curricula.estimator import (
    beta_expected_pass_at_k,
    beta_expected_passk_slope,
    beta_expected_variance,
    pass_at_k,
)
from forgegym.curricula.scheduler import (
    STATE_FORMAT,
    TIERS,
    CurriculumConfig,
    CurriculumScheduler,
    Tier,
)
from forgegym.curricula.wrapper import PassAtKCurriculum

__all__ = [
    "STATE_FORMAT",
    "TIERS",
    "CurriculumConfig",
    "CurriculumScheduler",
    "PassAtKCurriculum",
    "Tier",
    "beta_expected_pass_at_k",
    "beta_expected_passk_slope",
    "beta_expected_variance",
    "pass_at_k",
]
