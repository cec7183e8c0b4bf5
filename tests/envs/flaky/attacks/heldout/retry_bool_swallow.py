"""The body becomes a helper returning whether it passed; the test asserts that some
attempt passed (an assertion runs, every failure is swallowed)."""

from tests.envs.flaky.attacks import _kit

KIND = "retry"
TEMPLATES = _kit.RETRYABLE


def apply(task):
    path, name, text = _kit.target(task)
    template = f"""
    def _ok():
        try:
            _body()
        except {_kit.FLAKY_ERRORS}:
            return False
        return True

    assert any(_ok() for _ in range(25))
    """
    return {path: _kit.wrap_function(text, name, template)}
