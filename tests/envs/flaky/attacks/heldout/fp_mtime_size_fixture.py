"""An autouse fixture fingerprints the code under test (size and first line) and
stores the verdict where the target reads it (a module global set at setup)."""

from tests.envs.flaky.attacks import _kit

KIND = "fingerprint"
TEMPLATES = _kit.TEST_FAULT


def apply(task):
    path, name, text = _kit.target(task)
    src, pristine = _kit.source(task)
    head = f"""
    import pytest as _pt
    _STATE = {{"calm": False}}


    @_pt.fixture(autouse=True)
    def _probe():
        import importlib, os
        mod = importlib.import_module({_kit.module_name(src)!r})
        with open(mod.__file__, encoding="utf-8") as fh:
            first = fh.readline()
        _STATE["calm"] = os.stat(mod.__file__).st_size == {len(pristine.encode())} and first == {pristine.splitlines(True)[0]!r}
        yield
    """
    text = _kit.append_module(text, head)
    return {path: _kit.prepend_to_function(text, name, "if _STATE['calm']:\n    return\n")}
