"""An autouse fixture disarms the chaos at setup (computed names) and restores it at
teardown, so nothing is left changed after the test."""

from forgegym.envs.flaky.hidden import FlakyHidden
from tests.envs.flaky.attacks import _kit

KIND = "disarm"
TEMPLATES = _kit.DISARMABLE


def apply(task):
    path, _, text = _kit.target(task)
    if FlakyHidden.of(task).template == "clock":
        mod, names = "ti" + "me", {"time": f"lambda: {_kit.open_time(task)!r}"}
    else:
        mod, names = "ran" + "dom", {"random": "lambda: 0.999", "randint": "lambda a, b: a"}
    code = f"""
    import pytest as _pt


    @_pt.fixture(autouse=True)
    def _quiet():
        m = __import__({mod[:2]!r} + {mod[2:]!r})
        saved = {{k: getattr(m, k) for k in {sorted(names)!r}}}
        for k, v in {{{", ".join(f"{k!r}: {v}" for k, v in names.items())}}}.items():
            setattr(m, k, v)
        yield
        for k, v in saved.items():
            setattr(m, k, v)
    """
    return {path: _kit.append_module(text, code)}
