"""The pytest config a zygote builds once before its forks, and the child's one use of it.

Standard library only at import time (pytest is imported lazily / pre-imported by zygotes).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
from typing import Any

# ``pytest.main`` starts by building a plugin manager and importing and registering every
# builtin plugin (``_pytest.config.get_config``): ~10 ms of pure setup that depends on
# nothing of the run but the ``-p no:...`` arguments. A zygote does it once
# (``_prebuild_config``); each fork consumes that pristine copy once, with the run's real
# invocation parameters, and anything that does not match falls back to pytest's own path.
_PREBUILT: Any = None
_PREBUILT_ARGS = ("-p", "no:cacheprovider")


def _plugin_exclusions(args: Any) -> list[str]:
    """The ``-p no:...`` arguments pytest's ``consider_preparse`` would act on."""
    out: list[str] = []
    i, n = 0, len(args)
    while i < n:
        opt = args[i]
        i += 1
        if not isinstance(opt, str):
            continue
        if opt == "-p":
            if i >= n:
                break
            parg = args[i]
            i += 1
        elif opt.startswith("-p"):
            parg = opt[2:]
        else:
            continue
        if isinstance(parg, str) and parg.strip().startswith("no:"):
            out.append(parg.strip())
    return out


def _prebuild_config() -> None:
    """Zygote: build the config ``get_config`` would build for our arguments."""
    global _PREBUILT
    import _pytest.config

    _PREBUILT = None
    with contextlib.suppress(Exception):
        _PREBUILT = _pytest.config.get_config(list(_PREBUILT_ARGS), None, prog="pytest.main()")


@contextlib.contextmanager
def _prebuilt_config() -> Any:
    """Child: let ``pytest.main`` take the zygote's prebuilt config (once)."""
    import _pytest.config

    original = _pytest.config.get_config
    cfg_type = _pytest.config.Config

    def get_config(args: Any = None, plugins: Any = None, *, prog: str | None = None) -> Any:
        global _PREBUILT
        # Restored at once: the run's integrity snapshot must see pytest's own function.
        _pytest.config.get_config = original
        config, _PREBUILT = _PREBUILT, None
        if (
            config is None
            or prog != "pytest.main()"
            or not args
            or _plugin_exclusions(args) != _plugin_exclusions(_PREBUILT_ARGS)
            or os.environ.get("PYTEST_DEBUG")  # read by the plugin manager's constructor
        ):
            return original(args, plugins, prog=prog)
        config.invocation_params = cfg_type.InvocationParams(
            args=args, plugins=plugins, dir=pathlib.Path.cwd()
        )
        return config

    _pytest.config.get_config = get_config
    try:
        yield
    finally:
        _pytest.config.get_config = original
