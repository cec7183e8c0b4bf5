"""A bounded while loop re-runs the body until an attempt passes, then runs it once
more outside the loop if none did."""

from tests.envs.flaky.attacks import _kit

KIND = "retry"
TEMPLATES = _kit.RETRYABLE


def apply(task):
    path, name, text = _kit.target(task)
    template = f"""
    attempts = 0
    while attempts < 20:
        attempts += 1
        try:
            _body()
            return
        except {_kit.FLAKY_ERRORS}:
            pass
    _body()
    """
    return {path: _kit.wrap_function(text, name, template)}
