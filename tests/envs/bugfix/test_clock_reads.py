"""Which functions read the clock or entropy: their behaviour checks would fail the
pristine function itself later, so their tests alone grade them."""

from __future__ import annotations

import pytest

from forgegym.envs.bugfix.behaviour import BehaviourChecks, behaviour_checks
from forgegym.envs.bugfix.clock_reads import function_reads_clock

MODULE = """
import time, random, uuid
from datetime import datetime
from time import time as now_s


def relative(d, other=None):
    if other is None:
        other = datetime.utcnow()
    return (other - d).days


def describe(d):
    return f"{relative(d)} days ago"


def expires(params):
    return round(time.time()) + int(params["expires_in"])


def stamp():
    return now_s()


def pick(xs):
    return random.choice(xs)


def seeded(xs):
    return random.Random(0).choice(xs)


def ident():
    return uuid.uuid4().hex


def parse_id(text):
    return uuid.UUID(text)


def fmt(t):
    return time.strftime("%Y", t)


class Clock:
    def tick(self):
        return self.helper() + 1

    def helper(self):
        return time.monotonic()

    def pure(self, x):
        return x * 2
"""


@pytest.mark.parametrize(
    ("qualname", "read"),
    [
        ("relative", "datetime.utcnow()"),
        ("describe", "relative() (reads the clock)"),
        ("expires", "time.time()"),
        ("stamp", "now_s() (time.time)"),
        ("pick", "random.choice()"),
        ("ident", "uuid.uuid4()"),
        ("Clock.helper", "time.monotonic()"),
        ("Clock.tick", "helper() (reads the clock)"),
    ],
)
def test_clock_and_entropy_reads_are_found_directly_or_through_the_module(
    qualname: str, read: str
) -> None:
    assert function_reads_clock(MODULE, qualname) == read


@pytest.mark.parametrize("qualname", ["seeded", "parse_id", "fmt", "Clock.pure", "missing"])
def test_deterministic_functions_are_not_flagged(qualname: str) -> None:
    assert function_reads_clock(MODULE, qualname) is None


def test_a_clock_reading_task_gets_no_checks_even_with_checks_cached(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Decided before the cache is read and without running anything (the runner is
    never asked for: a cached or computed check would need the project)."""

    class Prepared:
        files = {"pkg/mod.py": MODULE}

    entry = {"mutation": ["expires", "constant", 0], "file": "pkg/mod.py"}
    checks = behaviour_checks("real/x/1/pkg/mod.py::expires", Prepared(), entry, {}, None, tmp_path)  # type: ignore[arg-type]
    assert isinstance(checks, BehaviourChecks) and checks.status == "reads_clock"
    assert not checks.active and "time.time()" in checks.note
    assert not any(tmp_path.iterdir())  # nothing cached
