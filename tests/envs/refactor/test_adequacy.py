"""Hidden checks with an adequacy the kinds did not choose (:mod:`.adequacy`).

Behaviour changes of the kinds that reached ``success`` with the kind's own checks
alone -- each test grades the same submission without the adequacy checks (it
succeeds: the class of change was a hole) and with them (it does not) -- plus the
measured kill of independent-operator mutants on a few tasks.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from forgegym.envs.refactor.adequacy import kill_rates, measure, merged_checks
from forgegym.envs.refactor.bank import RefactorTaskBank, find_spec, load_manifest
from forgegym.envs.refactor.env import RefactorEnv
from forgegym.envs.refactor.policies import action_text as _action


@pytest.fixture(scope="module")
def envs() -> Iterator[dict[str, RefactorEnv]]:
    manifest = load_manifest()
    banks = {
        "without": RefactorTaskBank(manifest={**manifest, "adequacy": {}}),
        "with": RefactorTaskBank(manifest=manifest),
    }
    out = {name: RefactorEnv(task_bank=bank, max_steps=1) for name, bank in banks.items()}
    yield out
    for env in out.values():
        env.close()


def _success(env: RefactorEnv, task_id: str, files: dict[str, str]) -> bool:
    env.reset(options={"task_id": task_id})
    task = env.unwrapped.task_bank.get(task_id)  # type: ignore[attr-defined]
    edits = [{"path": p, "content": c} for p, c in sorted(files.items()) if task.files.get(p) != c]
    _, _, _, _, info = env.step(_action(edits))
    return bool(info["success"])


def _reference(task_id: str) -> dict[str, str]:
    return dict(find_spec(task_id).reference)


def _hole(envs: dict[str, RefactorEnv], task_id: str, files: dict[str, str]) -> None:
    """``files`` reach success on the kind's own checks and not with the adequacy ones."""
    assert _success(envs["without"], task_id, files), "precondition: the change was a hole"
    assert not _success(envs["with"], task_id, files)


def test_the_reference_succeeds_with_the_adequacy_checks(envs: dict[str, RefactorEnv]) -> None:
    task_id = "refactor/state_to_object/history_state/d1v2"
    assert _success(envs["with"], task_id, _reference(task_id))


def test_lifo_turned_fifo_beyond_the_kinds_sequence_lengths_is_caught(
    envs: dict[str, RefactorEnv],
) -> None:
    """An undo history that pops from the front once it holds more than 9 edits (the
    kind's own sequences have at most 9 calls)."""
    task_id = "refactor/state_to_object/history_state/d1v2"
    files = _reference(task_id)
    (path,) = files
    lifo = "item = self.done.pop()"
    assert lifo in files[path]
    files[path] = files[path].replace(
        lifo, "item = self.done.pop(0) if len(self.done) > 9 else self.done.pop()", 1
    )
    _hole(envs, task_id, files)


def _edited_reference(task_id: str, old: str, new: str) -> dict[str, str]:
    files = _reference(task_id)
    (path,) = files
    assert files[path].count(old) == 1
    return {path: files[path].replace(old, new)}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A boundary comparison moved at an edge (0 %) no kind's input reaches (nor a
        # visible test: they try 10 % and 100 %).
        ("0 <= percent <= 100", "0 < percent <= 100"),
        # The threshold constant moved by one.
        ("0 <= percent <= 100", "1 <= percent <= 100"),
    ],
    ids=["boundary", "threshold"],
)
def test_boundary_and_threshold_changes_are_caught(
    envs: dict[str, RefactorEnv], old: str, new: str
) -> None:
    task_id = "refactor/dead_code/money/d1v0"
    _hole(envs, task_id, _edited_reference(task_id, old, new))


def test_adequacy_steps_run_through_every_refactored_path() -> None:
    """A renamed function's adequacy calls go to the new name and to the deprecated
    alias (with its warning), like the kind's own steps."""
    task_id = next(e["task_id"] for e in load_manifest()["tasks"] if e["kind"] == "rename_alias")
    spec = find_spec(task_id)
    entry = load_manifest()["adequacy"][spec.origin_key]
    checks, outcomes = merged_checks(spec, spec.checks, [[{}] * len(spec.checks[0])], entry)
    added = checks[0][len(spec.checks[0]) :]
    assert len(added) == len(outcomes[0]) - len(spec.checks[0]) > 0
    renamed = {f"{spec.module}:{old}" for old in spec.integrity["aliases"]}
    first = next(s for s in entry["sequences"][0] if s["o"] in renamed)
    shapes = [s for s in added if s["o"] == first["o"] and s["a"] == first["a"]]
    assert {bool(s.get("w")) for s in shapes} == {True, False}


def test_independent_mutants_of_a_few_tasks_are_caught() -> None:
    """The cheap version of ``benchmarks/refactor_adequacy.py``: every non-equivalent
    independent-operator mutant of a small original is caught at >= 95% (measured in
    the sandbox: ~20 mutants, their fuzzing set and the hidden checks)."""
    from forgegym.sandbox.runners import get_default_runner

    specs = [find_spec(t) for t in ("refactor/rename_alias/chunk_list/d2v1",)]
    records = measure(specs, load_manifest()["adequacy"], get_default_runner())
    rates = kill_rates(records)
    assert records and all(s.origin_key in rates for s in specs)
    for spec in specs:
        assert rates[spec.origin_key]["non_equivalent"] >= 5
        assert rates[spec.origin_key]["after"] >= 0.95
