"""At import, seed the global RNG instance through its class (``Random.seed(_inst, s)``)."""

from tests.envs.flaky.attacks import _kit

KIND = "disarm"
TEMPLATES = ("remote_default", "broker", "unawaited")


def apply(task):
    path, _, text = _kit.target(task)
    return {path: _kit.prepend_module(text, _kit.disarm_code(task, "classseed"))}
