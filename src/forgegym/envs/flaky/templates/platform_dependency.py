"""Scenario templates of the ``platform_dependency`` root cause."""

from __future__ import annotations

import calendar

from forgegym.envs.flaky.templates.base import (
    Draft,
    Variant,
    distract_src,
    distract_tests,
    fill,
    swap,
)

__all__ = ["platform_tz", "platform_locale", "platform_clock"]


def platform_tz(v: Variant) -> Draft:
    # UTC timestamps near a day and a month boundary, on opposite sides of midnight:
    # local-time conversion moves the day in some time zones, the month in others.
    day = v.num(2, 27)
    hour = v.rng.choice((1, 2, 22, 23))
    ts = 1704067200 + (day - 1) * 86400 + hour * 3600  # 2024-01-<day> <hour>:00 UTC
    month = v.num(3, 12)
    first = calendar.timegm((2024, month, 1, 0, 0, 0))
    # Day late in UTC (east zones move it forward) -> month ts just after midnight UTC
    # (west zones move it back), and vice versa.
    month_ts = first + 1800 if hour >= 22 else first - 1800
    month_txt = f"2024-{month:02d}" if hour >= 22 else f"2024-{month - 1:02d}"
    src = fill(
        '''
        from datetime import datetime, timezone


        def day_key(ts):
            """The UTC day a ${noun} timestamp belongs to."""
            return datetime.fromtimestamp(ts).strftime("%Y-%m-%d")


        def month_key(ts):
            """The UTC month a ${noun} timestamp is billed in."""
            return datetime.fromtimestamp(ts).strftime("%Y-%m")
        ''',
        v,
    ) + distract_src(v)
    day_old = 'datetime.fromtimestamp(ts).strftime("%Y-%m-%d")'
    month_old = 'datetime.fromtimestamp(ts).strftime("%Y-%m")'
    utc = "datetime.fromtimestamp(ts, tz=timezone.utc)"
    partial = swap(src, day_old, utc + '.strftime("%Y-%m-%d")')
    fixed = swap(partial, month_old, utc + '.strftime("%Y-%m")')
    test = fill(
        """
        from $pkg import $mod


        def test_day_key():
            assert $mod.day_key($ts) == "2024-01-$dd"
            assert $mod.month_key($month_ts) == "$month_txt"
        """,
        v,
        ts=ts,
        dd=f"{day:02d}",
        month_ts=month_ts,
        month_txt=month_txt,
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        partial_source=partial,
        target="test_day_key",
        fault_file="src",
        fault_func="day_key",
        mutant=('"%Y-%m-%d"', '"%Y-%d-%m"'),
        summary="day_key() and month_key() convert with the process time zone instead of UTC",
    )


def platform_locale(v: Variant) -> Draft:
    cents = v.num(1001, 99999)
    src = fill(
        '''
        import os


        def _decimal_point():
            lang = os.environ.get("LC_ALL") or os.environ.get("LANG", "")
            return "," if lang[:2] in ("de", "fr", "pt") else "."


        def export_amount(cents):
            """Render an amount for the machine-readable CSV export."""
            whole, frac = divmod(cents, 100)
            return f"{whole}{_decimal_point()}{frac:02d}"
        ''',
        v,
    ) + distract_src(v)
    fixed = swap(
        src, 'return f"{whole}{_decimal_point()}{frac:02d}"', 'return f"{whole}.{frac:02d}"'
    )
    test = fill(
        """
        from $pkg import $mod


        def test_export_amount():
            assert $mod.export_amount($cents) == "$txt"
        """,
        v,
        cents=cents,
        txt=f"{cents // 100}.{cents % 100:02d}",
    ) + distract_tests(v)
    return Draft(
        source=src,
        source_fixed=fixed,
        test=test,
        test_fixed=test,
        target="test_export_amount",
        fault_file="src",
        fault_func="export_amount",
        mutant=("divmod(cents, 100)", "divmod(cents, 10)"),
        summary="the machine-readable export follows the process locale's decimal point",
    )


def platform_clock(v: Variant) -> Draft:
    start, end = v.rng.choice(((9, 17), (8, 18), (10, 16)))
    hour = v.num(start + 1, end - 2)
    src = fill(
        '''
        import time


        def is_open(now=None):
            """Whether the ${noun} desk is open (UTC hours $start-$end)."""
            now = time.time() if now is None else now
            hour = int(now // 3600) % 24
            return $start <= hour < $end
        ''',
        v,
        start=start,
        end=end,
    ) + distract_src(v)
    ts = 1709683200 + hour * 3600 + 600  # 2024-03-06 <hour>:10 UTC
    test_old = fill(
        """
        from $pkg import $mod


        def test_desk_open():
            assert $mod.is_open()
            assert not $mod.is_open($night)
        """,
        v,
        night=1709683200 + 3 * 3600,
    )
    test_new = test_old.replace(f"{v.mod}.is_open()\n", f"{v.mod}.is_open({ts})\n")
    dt = distract_tests(v)
    return Draft(
        source=src,
        source_fixed=src,
        test=test_old + dt,
        test_fixed=test_new + dt,
        target="test_desk_open",
        fault_file="test",
        fault_func="test_desk_open",
        mutant=(f"return {start} <= hour < {end}", "return True"),
        summary="the test depends on the wall clock instead of passing a fixed time",
    )
