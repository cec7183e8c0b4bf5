"""The canary detectors (issue #37): each rule of the primary one, and the held-out one
finds a planted textual difference but not one that is absent."""

from __future__ import annotations

import random

from forgegym.tasklib.canary_detect import (
    Sample,
    accuracy,
    collect,
    eligibility_detector,
    heldout_detector,
    primary_detector,
    primary_without_ids,
)

DOUBLE = (
    'def test_a():\n    assert f("x") == "y"\n    assert f("z") == "w"\n    assert g("q") == "r"\n'
)


def _sample(**changes: object) -> Sample:
    fields: dict[str, object] = {
        "family": "bugfix",
        "canary": False,
        "observation": "A user reports a wrong result. The visible test suite passes.",
        "info_task_id": "bugfix/m/d1/0",
        "failing_visible": (),
        "test_sources": (DOUBLE,),
    }
    fields.update(changes)
    return Sample(**fields)  # type: ignore[arg-type]


def test_each_rule_of_the_primary_detector() -> None:
    assert not primary_detector(_sample())
    assert primary_detector(_sample(info_task_id="canary/bugfix/m/d1/0"))
    assert not primary_without_ids(_sample(info_task_id="canary/bugfix/m/d1/0"))
    # A shown test fails although the statement says the suite passes.
    assert primary_without_ids(_sample(failing_visible=("test_m.py::test_a",)))
    # A report that lists the failing test as failing is consistent; one that says it
    # passed (or does not list it) is not.
    report = (
        "The test suite fails:\n\n```\nPASSED test_m.py::test_a\n"
        "FAILED test_m.py::test_b at m.py:3 in f AssertionError\n```\n\n### test_m.py"
    )
    named = _sample(observation=report, failing_visible=("test_m.py::test_b",))
    unnamed = _sample(observation=report, failing_visible=("test_m.py::test_a",))
    assert not primary_without_ids(named) and primary_without_ids(unnamed)
    # A lone single-quoted literal among double-quoted ones.
    lone = DOUBLE + "    assert h(\"s\") == {'a': 1}\n"
    assert primary_without_ids(_sample(test_sources=(lone,)))
    # The preflight of a canary whose calm run fails.
    flaky = _sample(family="flaky", observation="## Preflight\nflaky; calm run failed; ...")
    assert primary_without_ids(flaky)
    # Refactor: the shown code is the behaviour to keep; a failing shown test betrays it.
    assert primary_without_ids(_sample(family="refactor", failing_visible=("t::test_a",)))


def test_the_heldout_detector_finds_a_planted_difference_and_nothing_else() -> None:
    rng = random.Random(0)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]

    def text() -> str:
        return " ".join(rng.choice(words) for _ in range(40))

    planted = [
        _sample(canary=i % 2 == 0, observation=text() + (" MARK" if i % 2 == 0 else ""))
        for i in range(80)
    ]
    assert accuracy(planted, heldout_detector(planted, use_ids=False)) >= 0.9
    plain = [_sample(canary=i % 2 == 0, observation=text()) for i in range(80)]
    assert accuracy(plain, heldout_detector(plain, use_ids=False)) <= 0.7
    # Ids count only when asked for.
    ids = [
        _sample(
            canary=i % 2 == 0,
            observation=text(),
            info_task_id="canary/x/0" if i % 2 == 0 else "x/0",
        )
        for i in range(80)
    ]
    assert accuracy(ids, heldout_detector(ids)) >= 0.9
    assert accuracy(ids, heldout_detector(ids, use_ids=False)) <= 0.7


def test_the_eligibility_detector_calls_every_task_that_could_carry_one_a_canary() -> None:
    # 10 canaries (eligible by construction), 10 tasks of which 4 could carry one: it is
    # right on the canaries and the 6 ineligible tasks, 0.5 + 0.6 / 2.
    samples = [_sample(canary=True, eligible=True) for _ in range(10)]
    samples += [_sample(canary=False, eligible=i < 4) for i in range(10)]
    assert accuracy(samples, [eligibility_detector(s) for s in samples]) == 0.8
    # Not computed: no canary.
    assert not eligibility_detector(_sample())


def test_collect_without_observing_gives_the_ids_eligibility_only() -> None:
    samples = collect("oversight", "Forge/Oversight-v0", 4, observe=False)
    assert [s.canary for s in samples] == [True] * 4 + [False] * 4
    # A canary's base took it; nothing was reset, so nothing was observed.
    assert all(s.eligible for s in samples if s.canary)
    assert all(s.observation == "" and s.test_sources == () for s in samples)
    assert all(s.eligible is not None for s in samples)
