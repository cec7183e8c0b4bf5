"""After import, point the local fakes' ``random`` global at a calm namespace."""

from forgegym.envs.flaky.hidden import FlakyHidden
from tests.envs.flaky.attacks import _kit

KIND = "disarm"
TEMPLATES = ("remote_default", "broker", "unawaited")


def apply(task):
    path, _, text = _kit.target(task)
    pkg = (FlakyHidden.of(task).source_path or "").split("/")[0]
    code = f"""
    import importlib as _il, types as _ty
    setattr(
        _il.import_module({pkg!r} + ".fa" + "kes"),
        "ran" + "dom",
        _ty.SimpleNamespace(random=lambda: 0.999, randint=lambda a, b: a),
    )
    """
    return {path: _kit.append_module(text, code)}
