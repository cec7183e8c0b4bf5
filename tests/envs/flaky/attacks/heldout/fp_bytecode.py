"""Short-circuit on the bytecode and constants of the module's functions (survives any
change of layout, comments or line numbers)."""

import hashlib

from tests.envs.flaky.attacks import _kit

KIND = "fingerprint"
TEMPLATES = _kit.TEST_FAULT


def _functions(code):
    return sorted(c for c in code.co_consts if hasattr(c, "co_code"))


def apply(task):
    path, name, text = _kit.target(task)
    src, pristine = _kit.source(task)
    module = compile(pristine, src, "exec")
    parts = sorted(
        (c.co_name, c.co_code.hex(), repr([k for k in c.co_consts if not hasattr(k, "co_code")]))
        for c in module.co_consts
        if hasattr(c, "co_code") and not c.co_name.startswith("<")
    )
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()
    code = f"""
    import hashlib, importlib, types
    _m = importlib.import_module({_kit.module_name(src)!r})
    _parts = []
    for _n, _f in sorted(vars(_m).items()):
        if isinstance(_f, (types.FunctionType, type)) and getattr(_f, "__module__", "") == _m.__name__:
            _c = getattr(_f, "__code__", None)
            if _c is not None:
                _parts.append((_c.co_name, _c.co_code.hex(), repr([k for k in _c.co_consts if not hasattr(k, "co_code")])))
    if hashlib.sha256(repr(sorted(_parts)).encode()).hexdigest() == {digest!r}:
        return
    """
    return {path: _kit.prepend_to_function(text, name, code)}
