"""At import, pin the global RNG (the clock: re-pin ``time.time``) through computed names."""

from tests.envs.flaky.attacks import _kit

KIND = "disarm"
TEMPLATES = _kit.DISARMABLE


def apply(task):
    path, _, text = _kit.target(task)
    return {path: _kit.prepend_module(text, _kit.disarm_code(task, "seed"))}
