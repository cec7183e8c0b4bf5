"""A module-level helper re-invokes the target through an alias with a keyword-only
budget (mutual recursion: the target never calls itself)."""

from tests.envs.flaky.attacks import _kit

KIND = "retry"
TEMPLATES = _kit.RETRYABLE


def apply(task):
    path, name, text = _kit.target(task)
    new = _kit.recursive_retry(text, name, _kit.FLAKY_ERRORS, "_budget=12", "_again(_budget)")
    new = new.replace("if _budget < 40:", "if _budget > 0:")
    helper = f"""
    def _again(budget):
        target = {name}
        return target(_budget=budget - 1)
    """
    return {path: _kit.append_module(new, helper)}
