"""Mutants of the reference refactorings (issue #37): a correct refactor with one subtle
behaviour change applied to it must not reach success in the ``reduce_complexity`` and
``state_to_object`` kinds (:mod:`forgegym.envs.refactor.reference_mutants`, and the
structured adequacy inputs of :mod:`forgegym.envs.refactor.adequacy`)."""

from __future__ import annotations

import pytest

from forgegym.envs.refactor.adequacy import (
    STRUCTURED_KINDS,
    adequacy_sequences,
    aggregate_boundary_calls,
    block_sequences,
)
from forgegym.envs.refactor.bank import RefactorTaskBank, find_spec
from forgegym.envs.refactor.env import RefactorEnv
from forgegym.envs.refactor.reference_mutants import (
    candidate_tree,
    kill_rates_by_kind,
    measure_reference_mutants,
    mutable_files,
)
from tests.envs.refactor.conftest import reference_change_succeeds

PIPELINE = """
def summarize(items):
    total = sum(x for x in items if x is not None)
    if total > 57:
        return "high"
    if total > 57 // 2:
        return "mid"
    return "low"
"""


def test_aggregate_boundaries_put_a_total_on_each_threshold() -> None:
    calls = aggregate_boundary_calls(PIPELINE, [("summarize", [[3, None, 4]])])
    sums = {sum(x for x in args[0] if x is not None) for _, args in calls}
    # The threshold on the total (57) and the folded one (57 // 2 = 28), each side.
    assert {56, 57, 58, 27, 28, 29} <= sums
    assert all(fn == "summarize" and isinstance(args[0], list) for fn, args in calls)
    assert not aggregate_boundary_calls(PIPELINE, [("summarize", ["text"])])


def test_block_sequences_call_each_function_in_runs() -> None:
    observed = [("push", ["a"]), ("push", ["b"]), ("undo", []), ("redo", [])]
    seqs = block_sequences(observed, seed="s")
    # Every ordered pair and triple of the three functions: 6 + 6.
    assert len(seqs) == 12
    pushes_then_undos = [s for s in seqs if [f for f, _ in s[:6]] == ["push"] * 3 + ["undo"] * 3]
    assert pushes_then_undos
    assert block_sequences(observed, seed="s") == seqs  # seeded


def test_only_the_structured_kinds_draw_the_structured_inputs() -> None:
    spec = find_spec("refactor/state_to_object/history_store/d3v3")
    assert spec.kind in STRUCTURED_KINDS and not spec.stateless
    seqs = adequacy_sequences(spec, seed=1)
    runs = [s for s in seqs if len(s) >= 6 and len({x["o"] for x in s[:3]}) == 1]
    assert len(runs) >= 12


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task_id", "path", "old", "new"),
    [
        # Both reached success with the entries drawn before the structured inputs
        # (checked when they were redrawn): a threshold on a total the code computes,
        # and a redo stack popped from the other end.
        (
            "refactor/reduce_complexity/pipeline_batch/d1v0",
            "pipeline_batch.py",
            "if total > 57:",
            "if total >= 57:",
        ),
        (
            "refactor/state_to_object/history_store/d3v3",
            "history_store.py",
            "item = self.undone.pop()",
            "item = self.undone.pop(0)",
        ),
    ],
)
def test_subtle_changes_of_the_reference_no_longer_reach_success(
    refactor_env: RefactorEnv, task_id: str, path: str, old: str, new: str
) -> None:
    assert reference_change_succeeds(refactor_env, task_id, path, old, old)  # the reference
    assert not reference_change_succeeds(refactor_env, task_id, path, old, new)


@pytest.mark.slow
def test_every_detectable_mutant_of_two_references_is_killed() -> None:
    from forgegym.sandbox.runners import get_default_runner

    ids = [
        "refactor/reduce_complexity/pipeline_batch/d1v0",
        "refactor/state_to_object/history_store/d3v3",
    ]
    bank = RefactorTaskBank()
    tasks = [bank.get(i) for i in ids]
    assert all(mutable_files(t) and set(t.reference) <= set(candidate_tree(t)) for t in tasks)
    records = measure_reference_mutants(tasks, {i: find_spec(i) for i in ids}, get_default_runner())
    assert {r.task_id for r in records} == set(ids)  # both references passed their checks
    rates = kill_rates_by_kind(records)
    for kind in ("reduce_complexity", "state_to_object"):
        for row in rates[kind].values():
            assert row["tasks_with_survivor"] == 0, rates
    assert sum(r.detectable for r in records) >= 10
