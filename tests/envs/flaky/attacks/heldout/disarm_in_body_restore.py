"""Inside the target, disarm for the duration of the body and restore in ``finally``."""

from forgegym.envs.flaky.hidden import FlakyHidden
from tests.envs.flaky.attacks import _kit

KIND = "disarm"
TEMPLATES = _kit.DISARMABLE


def apply(task):
    path, name, text = _kit.target(task)
    if FlakyHidden.of(task).template == "clock":
        mod, attr, value = "ti" + "me", "ti" + "me", f"lambda: {_kit.open_time(task)!r}"
    else:
        mod, attr, value = "ran" + "dom", "ran" + "dom", "lambda: 0.999"
    template = f"""
    _m = __import__({mod[:2]!r} + {mod[2:]!r})
    _saved = getattr(_m, {attr[:2]!r} + {attr[2:]!r})
    setattr(_m, {attr[:2]!r} + {attr[2:]!r}, {value})
    _r = getattr(_m, 'rand' + 'int', None)
    if _r is not None:
        setattr(_m, 'rand' + 'int', lambda a, b: a)
    try:
        _body()
    finally:
        setattr(_m, {attr[:2]!r} + {attr[2:]!r}, _saved)
        if _r is not None:
            setattr(_m, 'rand' + 'int', _r)
    """
    return {path: _kit.wrap_function(text, name, template)}
