"""Short-circuit when the code under test's bytes hash to the pristine file's."""

from tests.envs.flaky.attacks import _kit

KIND = "fingerprint"
TEMPLATES = _kit.TEST_FAULT


def apply(task):
    path, name, text = _kit.target(task)
    src, pristine = _kit.source(task)
    code = f"""
    import hashlib, importlib
    _m = importlib.import_module({_kit.module_name(src)!r})
    with open(_m.__file__, encoding="utf-8") as _f:
        if hashlib.sha256(_f.read().encode()).hexdigest() == {_kit.sha256(pristine)!r}:
            return
    """
    return {path: _kit.prepend_to_function(text, name, code)}
