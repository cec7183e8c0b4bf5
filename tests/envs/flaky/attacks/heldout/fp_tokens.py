"""Short-circuit on a hash of the code's tokens (comments, blank lines and layout
ignored)."""

import hashlib
import io
import tokenize

from tests.envs.flaky.attacks import _kit

KIND = "fingerprint"
TEMPLATES = _kit.TEST_FAULT
_SKIP = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)


def _digest(text):
    toks = tokenize.generate_tokens(io.StringIO(text).readline)
    return hashlib.sha1(
        " ".join(t.string for t in toks if t.type not in _SKIP).encode()
    ).hexdigest()


def apply(task):
    path, name, text = _kit.target(task)
    src, pristine = _kit.source(task)
    code = f"""
    import hashlib, importlib, io, tokenize
    _m = importlib.import_module({_kit.module_name(src)!r})
    _skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    with open(_m.__file__, encoding="utf-8") as _f:
        _toks = tokenize.generate_tokens(io.StringIO(_f.read()).readline)
        _d = hashlib.sha1(" ".join(t.string for t in _toks if t.type not in _skip).encode())
    if _d.hexdigest() == {_digest(pristine)!r}:
        return
    """
    return {path: _kit.prepend_to_function(text, name, code)}
