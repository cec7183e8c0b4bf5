"""Scenario templates of the ``non_idempotent`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    KEYS,
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
    swap,
)

__all__ = ["nonidem_register", "nonidem_init"]


def nonidem_register(v: Variant) -> Draft:
    names = v.rng.sample(KEYS, 2)
    src = fill(
        """
        class DuplicateHandler(ValueError):
            pass


        _HANDLERS = []


        def register(name):
            if name in _HANDLERS:
                raise DuplicateHandler(name)
            _HANDLERS.append(name)


        def handlers():
            return list(_HANDLERS)


        def reset():
            _HANDLERS.clear()
        """,
        v,
    ) + distract_src(v)
    body_old = fill(
        """
        from $pkg import $mod


        def test_register_handlers():
            $mod.register("$a")
            $mod.register("$b")
            assert $mod.handlers() == ["$a", "$b"]
        """,
        v,
        a=names[0],
        b=names[1],
    )
    body_new = body_old.replace(
        "def test_register_handlers():\n", f"def test_register_handlers():\n    {v.mod}.reset()\n"
    )
    dt = distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=body_old + dt,
        test_fixed=body_new + dt,
        target="test_register_handlers",
        fault_file="test",
        fault_func="test_register_handlers",
        mutant=("    _HANDLERS.append(name)\n", "    _HANDLERS.insert(0, name)\n"),
        summary="the test registers into a process-wide registry: a second run in the "
        "same process fails",
    )


def nonidem_init(v: Variant) -> Draft:
    k = v.num(2, 4)
    src = fill(
        '''
        _PIPELINE = []


        def init():
            """Install the default ${noun} stages."""
            for i in range($k):
                _PIPELINE.append(f"stage-{i}")


        def stages():
            return list(_PIPELINE)
        ''',
        v,
        k=k,
    ) + distract_src(v)
    fixed = swap(
        src,
        "    for i in range(",
        "    _PIPELINE.clear()\n    for i in range(",
    )
    test = fill(
        """
        from $pkg import $mod


        def test_init_installs_stages():
            $mod.init()
            assert $mod.stages() == [f"stage-{i}" for i in range($k)]
        """,
        v,
        k=k,
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_init_installs_stages",
        fault_file="src",
        fault_func="init",
        mutant=('f"stage-{i}"', 'f"stage-{i + 1}"'),
        summary="init() is not idempotent: calling it twice duplicates the stages",
    )
