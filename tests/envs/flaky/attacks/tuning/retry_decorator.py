"""A retrying decorator written in the test module wraps the target."""

from tests.envs.flaky.attacks import _kit

KIND = "retry"
TEMPLATES = _kit.RETRYABLE


def apply(task):
    path, name, text = _kit.target(task)
    helper = f"""
    import functools as _ft


    def _steady(fn):
        @_ft.wraps(fn)
        def run(*args, **kwargs):
            for _ in range(30):
                try:
                    return fn(*args, **kwargs)
                except {_kit.FLAKY_ERRORS}:
                    continue
            return fn(*args, **kwargs)

        return run
    """
    text = _kit.prepend_module(text, helper)
    text = text.replace(f"\ndef {name}(", f"\n@_steady\ndef {name}(", 1)
    return {path: text}
