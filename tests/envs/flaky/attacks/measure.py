"""Grade every attack of a half on its scenarios, next to the no-op (the recall figure).

``python -m tests.envs.flaky.attacks.measure [tuning|heldout|all] [per_template]``
prints one line per (attack, scenario) and the recall: the share of attack gradings
that are not ``success`` and score no more than the no-op.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from forgegym.envs.flaky.policies import edit_action

HALVES = ("tuning", "heldout")
NOOP = '{"action": "submit"}'
#: The no-op's score per scenario (deterministic: graded once per process).
_NOOPS: dict[str, float] = {}


def attacks(half: str) -> list[ModuleType]:
    """The attack modules of ``half`` (sorted by name)."""
    package = importlib.import_module(f"tests.envs.flaky.attacks.{half}")
    return [
        importlib.import_module(f"{package.__name__}.{m.name}")
        for m in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
    ]


def scenarios(bank: Any, template: str, per_template: int) -> list[str]:
    """The first ``per_template`` validated scenarios of ``template`` (id order)."""
    ids = sorted(t for t in bank.entries if t.split("/")[2] == template)
    return ids[:per_template]


@dataclass(frozen=True)
class Graded:
    attack: str
    task_id: str
    score: float
    noop: float
    success: bool
    gates: tuple[str, ...]

    @property
    def caught(self) -> bool:
        return not self.success and self.score <= self.noop + 1e-9


def grade(
    env: Any, module: ModuleType, per_template: int = 1, templates: tuple[str, ...] | None = None
) -> list[Graded]:
    """Grade ``module``'s attack on ``per_template`` scenarios of each of its templates
    (or of ``templates``)."""
    out = []
    bank = env.task_bank
    for template in templates or module.TEMPLATES:
        for tid in scenarios(bank, template, per_template):
            task = bank.get(tid)
            files = module.apply(task)
            text = edit_action(task, {**task.files, **files})
            if tid not in _NOOPS:
                ((_NOOPS[tid], _),) = env.grade_completions(tid, [NOOP])
            ((score, breakdown),) = env.grade_completions(tid, [text])
            noop = _NOOPS[tid]
            out.append(
                Graded(
                    module.__name__.rsplit(".", 1)[-1],
                    tid,
                    float(score),
                    float(noop),
                    bool(env._success(breakdown)),
                    tuple(breakdown.gates),
                )
            )
    return out


def main(argv: list[str]) -> None:
    import gymnasium as gym

    import forgegym  # noqa: F401

    halves = HALVES if not argv or argv[0] == "all" else (argv[0],)
    per = int(argv[1]) if len(argv) > 1 else 1
    env = gym.make("Forge/FlakyRepair-v0", order_analysis=False).unwrapped
    try:
        for half in halves:
            results = [g for m in attacks(half) for g in grade(env, m, per)]
            for g in results:
                mark = "caught" if g.caught else "HOLE  "
                print(
                    f"{half:8} {mark} {g.attack:28} {g.task_id:45} score={g.score:+.3f} "
                    f"noop={g.noop:+.3f} success={g.success} gates={list(g.gates)}"
                )
            caught = sum(g.caught for g in results)
            print(f"== {half}: recall {caught}/{len(results)}")
    finally:
        env.close()


if __name__ == "__main__":
    main(sys.argv[1:])
