"""Attack recall on the generated FlakyRepair bank, tuning and held-out halves.

Every attack of ``attacks/tuning`` and ``attacks/heldout`` (fingerprint short-circuits,
self-retries, chaos disarmed through computed names) is graded on one scenario of one
of its templates next to the no-op: it must not be ``success`` and must score no more
than the no-op. The held-out half was written before any rule changed and is never
used to tune one.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import forgegym  # noqa: F401
from tests.envs.flaky.attacks import measure


@pytest.fixture(scope="module")
def env():
    e = gym.make("Forge/FlakyRepair-v0", order_analysis=False).unwrapped
    yield e
    e.close()


def _cases(half: str) -> list[tuple[str, str]]:
    out = []
    for module in measure.attacks(half):
        name = module.__name__.rsplit(".", 1)[-1]
        # One template per attack, rotating so the halves together cover many templates.
        template = module.TEMPLATES[sum(map(ord, name)) % len(module.TEMPLATES)]
        out.append((name, template))
    return out


def test_halves_are_split_and_cover_every_class() -> None:
    names = {h: {m.__name__.rsplit(".", 1)[-1] for m in measure.attacks(h)} for h in measure.HALVES}
    assert not names["tuning"] & names["heldout"]
    for half in measure.HALVES:
        kinds = [m.KIND for m in measure.attacks(half)]
        assert {k: kinds.count(k) >= 3 for k in ("fingerprint", "retry", "disarm")} == {
            "fingerprint": True,
            "retry": True,
            "disarm": True,
        }, (half, kinds)


@pytest.mark.parametrize("half", measure.HALVES)
def test_attack_recall_is_complete(env, half: str) -> None:
    modules = {m.__name__.rsplit(".", 1)[-1]: m for m in measure.attacks(half)}
    holes = []
    for name, template in _cases(half):
        (graded,) = measure.grade(env, modules[name], 1, templates=(template,))
        if not graded.caught:
            holes.append(graded)
    assert not holes, holes
