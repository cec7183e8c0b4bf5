"""A loop re-runs the body under ``contextlib.suppress`` until an attempt gets through
(no ``except`` clause, no self-call)."""

from tests.envs.flaky.attacks import _kit

KIND = "retry"
TEMPLATES = _kit.RETRYABLE


def apply(task):
    path, name, text = _kit.target(task)
    template = f"""
    import contextlib
    for _ in range(25):
        with contextlib.suppress{_kit.FLAKY_ERRORS}:
            _body()
            break
    """
    return {path: _kit.wrap_function(text, name, template)}
