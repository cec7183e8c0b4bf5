"""The target retries itself by recursion through a defaulted parameter."""

from tests.envs.flaky.attacks import _kit

KIND = "retry"
TEMPLATES = _kit.RETRYABLE


def apply(task):
    path, name, text = _kit.target(task)
    new = _kit.recursive_retry(text, name, _kit.FLAKY_ERRORS, "_attempt=0", f"{name}(_attempt + 1)")
    return {path: new}
