"""Scenario templates of the ``async_wait`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
    swap,
)

__all__ = ["async_unawaited", "async_fire_and_forget"]


def async_unawaited(v: Variant) -> Draft:
    mult, polls, ticks = v.num(2, 9), v.num(2, 3), v.num(3, 5)
    src = fill(
        """
        import asyncio

        from $pkg import fakes


        async def load_$noun(key):
            await fakes.io_delay($ticks)
            return {"key": key, "size": len(key) * $mult}


        async def collect_$noun(key, sink):
            sink.append(await load_$noun(key))
        """,
        v,
        ticks=ticks,
        mult=mult,
    ) + distract_src(v)
    whole = fill(
        """
        import asyncio

        from $pkg import $mod, fakes


        def test_collect_$noun():
            async def scenario():
                sink = []
                BODY
                return sink

            assert asyncio.run(scenario()) == [{"key": "$key", "size": $size}]
        """,
        v,
        size=len(v.key) * mult,
    ) + distract_tests(v)
    flaky_call = f'asyncio.ensure_future({v.mod}.collect_{v.noun}("{v.key}", sink))\n'
    flaky = whole.replace("BODY\n", flaky_call + f"        await fakes.settle({polls})\n")
    fixed = whole.replace("BODY\n", f'await {v.mod}.collect_{v.noun}("{v.key}", sink)\n')
    return Draft(
        source=src,
        source_fixed=src,
        test=flaky,
        test_fixed=fixed,
        target=f"test_collect_{v.noun}",
        fault_file="test",
        fault_func=f"test_collect_{v.noun}",
        mutant=(f"len(key) * {mult}", f"len(key) * {mult} + 1"),
        summary="the test checks a fire-and-forget task after a fixed number of "
        "scheduler turns instead of awaiting it",
    )


def async_fire_and_forget(v: Variant) -> Draft:
    ticks, polls = v.num(3, 5), v.num(2, 3)
    src = fill(
        '''
        import asyncio

        from $pkg import fakes


        async def _fill(cache, key):
            await fakes.io_delay($ticks)
            cache[key] = key.upper()


        async def refresh(cache, key):
            """Refresh ``cache[key]`` from the backend."""
            asyncio.ensure_future(_fill(cache, key))
        ''',
        v,
        ticks=ticks,
    ) + distract_src(v)
    fixed = swap(src, "    asyncio.ensure_future(_fill(cache, key))", "    await _fill(cache, key)")
    test = fill(
        """
        import asyncio

        from $pkg import $mod, fakes


        def test_refresh_fills_cache():
            async def scenario():
                cache = {}
                await $mod.refresh(cache, "$key")
                await fakes.settle($polls)
                return cache

            assert asyncio.run(scenario()) == {"$key": "$upper"}
        """,
        v,
        polls=polls,
        upper=v.key.upper(),
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_refresh_fills_cache",
        fault_file="src",
        fault_func="refresh",
        mutant=("cache[key] = key.upper()", "cache[key] = key.lower()"),
        summary="refresh() schedules the fill as a task and returns before it ran",
    )
