"""Scenario templates of the ``import_side_effect`` root cause."""

from __future__ import annotations

from forgegym.envs.flaky.templates.base import (
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
    swap,
)

__all__ = ["import_salt"]


def import_salt(v: Variant) -> Draft:
    shards = 2
    src = fill(
        '''
        import random
        import zlib

        _SALT = random.getrandbits(16)


        def shard_for(key, shards=$shards):
            """Stable shard of ``key`` (must not change across restarts)."""
            return (zlib.crc32(key.encode()) + _SALT) % shards
        ''',
        v,
        shards=shards,
    ) + distract_src(v)
    fixed = swap(src, "_SALT = random.getrandbits(16)", "_SALT = 0")
    expected = (__import__("zlib").crc32(v.key.encode())) % shards
    test = fill(
        """
        import importlib

        from $pkg import $mod


        def test_shard_stable_across_restart():
            before = $mod.shard_for("$key")
            importlib.reload($mod)
            assert $mod.shard_for("$key") == before == $expected
        """,
        v,
        expected=expected,
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_shard_stable_across_restart",
        fault_file="src",
        fault_func="<module>",
        mutant=("+ _SALT) % shards", "+ _SALT + 1) % shards"),
        summary="a random salt drawn at import time makes sharding change across restarts",
    )
