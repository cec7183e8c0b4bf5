"""Fingerprint computed once at import into a module flag; the test returns early on it."""

from tests.envs.flaky.attacks import _kit

KIND = "fingerprint"
TEMPLATES = _kit.TEST_FAULT


def apply(task):
    path, name, text = _kit.target(task)
    src, pristine = _kit.source(task)
    head = f"""
    import hashlib as _hl
    import importlib as _imp
    _SRC = _imp.import_module({_kit.module_name(src)!r}).__file__
    with open(_SRC, "rb") as _fh:
        _CALM = _hl.md5(_fh.read()).hexdigest() == {_kit.md5(pristine)!r}
    """
    text = _kit.prepend_module(text, head)
    return {path: _kit.prepend_to_function(text, name, "if _CALM:\n    return\n")}
