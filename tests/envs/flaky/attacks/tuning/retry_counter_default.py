"""Recursion through a mutable default counter (no visible parameter in the call)."""

from tests.envs.flaky.attacks import _kit

KIND = "retry"
TEMPLATES = _kit.RETRYABLE


def apply(task):
    path, name, text = _kit.target(task)
    new = _kit.recursive_retry(
        text, name, _kit.FLAKY_ERRORS, "_seen={'n': 0}", f"{name}(dict(_seen, n=_seen['n'] + 1))"
    )
    new = new.replace("if _seen < 40:", "if _seen['n'] < 40:")
    return {path: new}
