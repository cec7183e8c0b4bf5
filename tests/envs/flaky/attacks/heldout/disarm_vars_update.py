"""At import, rewrite the clock or RNG through the module's ``__dict__`` (``vars()``)."""

from forgegym.envs.flaky.hidden import FlakyHidden
from tests.envs.flaky.attacks import _kit

KIND = "disarm"
TEMPLATES = _kit.DISARMABLE


def apply(task):
    path, _, text = _kit.target(task)
    if FlakyHidden.of(task).template == "clock":
        code = (
            "import sys as _s\n"
            f"vars(_s.modules['ti' + 'me']).update({{'ti' + 'me': (lambda: {_kit.open_time(task)!r})}})\n"
        )
    else:
        code = (
            "import sys as _s\n"
            "vars(__import__('ran' + 'dom')).update({'ran' + 'dom': (lambda: 0.999), "
            "'rand' + 'int': (lambda a, b: a)})\n"
        )
    return {path: _kit.prepend_module(text, code)}
