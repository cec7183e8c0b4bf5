"""Recursion through a computed global name (no literal self-call in the source)."""

from tests.envs.flaky.attacks import _kit

KIND = "retry"
TEMPLATES = _kit.RETRYABLE


def apply(task):
    path, name, text = _kit.target(task)
    head, tail = name[: len(name) // 2], name[len(name) // 2 :]
    call = f"globals()[{head!r} + {tail!r}](depth=depth + 1)"
    return {path: _kit.recursive_retry(text, name, _kit.FLAKY_ERRORS, "depth=0", call)}
