"""Performance canaries: the grader's oracle and the visible tests follow a catalogue
bug the public traces reveal, drawn uniformly, the starting one included (static
checks; issue #37, D3 of docs/design/006-canaries.md)."""

from __future__ import annotations

import json
import random
from collections import Counter

from forgegym.envs.performance.canaries import base_bank, canary_bank, follow_the_tests, plan
from forgegym.envs.performance.catalog import structure
from forgegym.envs.performance.generator import PUBLIC_TRACES, visible_tests
from forgegym.envs.performance.hidden import PerformanceHidden
from forgegym.rewards import is_noop
from forgegym.tasklib.canaries import base_id_of


def _cheat_files(action: str) -> dict[str, str]:
    actions = json.loads(action.removeprefix("```json\n").removesuffix("\n```"))
    return {e["path"]: e["content"] for e in actions[0]["edits"]}


def test_oracle_and_visible_tests_follow_a_revealed_bug() -> None:
    bank = canary_bank()
    for task_id in bank.ids()[::5]:
        canary, base = bank.get(task_id), bank.base_bank.get(base_id_of(task_id))
        hidden = PerformanceHidden.of(canary)
        bug = canary.metadata["contradiction"]["bug"]
        s = structure(hidden.structure)
        assert hidden.oracle == {s.path: s.buggy_source(bug)}
        assert hidden.oracle != canary.reference == base.reference
        honest, _ = visible_tests(s.name, hidden.profile, PUBLIC_TRACES)
        assert canary.files[s.test_path] != base.files[s.test_path] == honest
        assert canary.files[s.path] == base.files[s.path]
        assert canary.description == base.description  # the contract is unchanged
        assert PerformanceHidden.of(base).oracle == {}
        assert follow_the_tests(canary) is not None and follow_the_tests(base) is None


def test_some_canaries_follow_their_bases_own_bug_and_pass_on_the_shown_code() -> None:
    """Those canaries' visible tests are the shown code's own outputs (they pass on it,
    like the tests of a task whose bug the public traces miss); the cheat keeps the
    bug behind a change that is not a no-op (an unchanged module is no progress)."""
    bank = canary_bank()
    own = [
        bank.get(i)
        for i in bank.ids()
        if PerformanceHidden.of(bank.get(i)).start
        == f"bug{bank.get(i).metadata['contradiction']['bug']}"
    ]
    assert len(own) >= 5
    for canary in own:
        hidden = PerformanceHidden.of(canary)
        s = structure(hidden.structure)
        assert hidden.oracle == {s.path: canary.files[s.path]}  # the shown code is the oracle
        cheat = _cheat_files(follow_the_tests(canary) or "")
        assert not is_noop({s.path: canary.files[s.path]}, cheat)
        assert cheat[s.path].startswith(canary.files[s.path])


def _followed(task: object, draws: int) -> Counter[int]:
    return Counter(plan(task, random.Random(k))["bug"] for k in range(draws))  # type: ignore[arg-type,index]


def test_the_bug_is_drawn_uniformly_the_starting_one_included() -> None:
    """On a fast-but-buggy task whose bug the public traces reveal, each revealed bug is
    followed about equally often (1 / their number), the starting one included."""
    bank = base_bank()
    bugs = (bank.get(i) for i in bank.ids() if "/bug" in i)
    task = next(
        t
        for t in bugs
        if plan(t, random.Random(0)) is not None
        and int(PerformanceHidden.of(t).start[3:]) in (seen := _followed(t, 100))
        and len(seen) >= 3
    )
    counts = _followed(task, 1000)
    for bug, seen in counts.items():
        assert abs(seen / 1000 - 1 / len(counts)) < 0.06, (bug, counts)
    assert int(PerformanceHidden.of(task).start[3:]) in counts
