"""``BugfixTaskBank``: validated bug-fix tasks served from the shipped manifest.

Every task is regenerated deterministically from its manifest entry (module name +
mutation list) by re-applying the mutations to the trusted reference: no sandbox run,
no randomness, so ``get`` gives byte-identical tasks in any process.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import libcst as cst

from forgegym.core import bank as core_bank
from forgegym.core.bank import ManifestTaskBank
from forgegym.core.task import Task, UnknownTaskError
from forgegym.envs.bugfix.generator import DIFFICULTY_LEVELS, MANIFEST_PATH
from forgegym.envs.bugfix.hidden import BugfixHidden
from forgegym.tasklib.corpus import ReferenceModule, load_corpus
from forgegym.tasklib.mutations import Mutation, apply_mutations
from forgegym.tasklib.values import describe_outcome

__all__ = ["BugfixTaskBank", "build_task", "load_manifest"]

FAMILY = "bugfix"


@functools.lru_cache(maxsize=4)
def load_manifest(path: Path = MANIFEST_PATH) -> dict[str, Any]:
    """The validated manifest."""
    return core_bank.load_manifest(path, rebuild="python -m forgegym.envs.bugfix.generator")


def _drop_tests(test_source: str, names: Sequence[str]) -> str:
    """The visible test file without the test functions ``names``."""
    module = cst.parse_module(test_source)
    body = [
        stmt
        for stmt in module.body
        if not (isinstance(stmt, cst.FunctionDef) and stmt.name.value in names)
    ]
    return module.with_changes(body=body).code


def _symptom_text(ref: ReferenceModule, entry: dict[str, Any]) -> str:
    symptom = entry["symptom"]
    call = ref.hidden_calls()[symptom["call"]]
    got = str(symptom["got"])
    if got.startswith("returned "):  # manifests built before values were shown as Python's
        with contextlib.suppress(ValueError):
            got = f"returned {json.loads(got.removeprefix('returned '))!r}"
    return (
        f"A user reports a wrong result from `{ref.module_path}`:\n\n"
        f"> I called `{call.describe()}` and it {got}, but it should "
        f"{describe_outcome(call.expected)}.\n\n"
        "The visible test suite passes; it does not cover this case. Hidden checks will "
        "compare your version's behaviour with the intended one on many inputs."
    )


def _report_text(ref: ReferenceModule, entry: dict[str, Any]) -> str:
    return (
        f"The test suite of `{ref.module_path}` fails:\n\n```\n{entry['test_report']}\n```\n\n"
        "Hidden checks will also compare your version's behaviour with the intended one "
        "on many more inputs, so fix the cause, not the test inputs."
    )


def build_task(entry: dict[str, Any]) -> Task:
    """The task of one manifest entry (pure; deterministic)."""
    ref = load_corpus()[entry["module"]]
    mutations = tuple(Mutation.from_json(m) for m in entry["mutations"])
    buggy = apply_mutations(ref.source, mutations)
    symptom_only = bool(entry["symptom_only"])
    if symptom_only:
        test_source = _drop_tests(ref.test_source, entry["failing_tests"])
        tests = tuple(t for t in ref.test_functions if t not in entry["failing_tests"])
    else:
        test_source = ref.test_source
        tests = ref.test_functions
    fix_lines = sum(
        1
        for line in difflib.unified_diff(buggy.splitlines(), ref.source.splitlines(), lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )
    body = _symptom_text(ref, entry) if symptom_only else _report_text(ref, entry)
    description = (
        f"{body}\n\nFix the bug(s) in `{ref.module_path}` (there may be more than one). "
        "Only that file is editable; keep its public functions and their behaviour on "
        "inputs that already work. Submit when done."
    )
    hidden = BugfixHidden(
        module=ref.name,
        calls=list(ref.hidden_calls()),
        failing_hidden=list(entry["failing_hidden"]),
        mutations=[m.to_json() for m in mutations],
        mutated_file=ref.module_path,
        mutated_functions=sorted({m.function for m in mutations}),
        module_functions=list(ref.functions),
        fix_lines=fix_lines,
        symptom_call=entry["symptom"]["call"] if symptom_only else None,
    )
    return Task(
        task_id=entry["id"],
        family=FAMILY,
        difficulty=int(entry["level"]),
        title=f"Fix the bug in {ref.module_path}",
        description=description,
        files={ref.module_path: buggy, ref.test_path: test_source},
        editable_files=(ref.module_path,),
        visible_test_files=(ref.test_path,),
        visible_test_ids=ref.test_ids(tests),
        hidden=hidden,
        reference={ref.module_path: ref.source},
        metadata={
            "module": ref.name,
            "n_bugs": len(mutations),
            "symptom_only": symptom_only,
        },
    )


class BugfixTaskBank(ManifestTaskBank):
    """The :class:`~forgegym.core.task.TaskBank` of ``Forge/Bugfix-v0``.

    Args:
        manifest_path: the validated manifest (default: the one shipped in ``data/``).
        check_digests: refuse a manifest whose corpus digests do not match the corpus
            on disk (a stale manifest would serve unvalidated tasks).
    """

    family = FAMILY
    difficulty_levels: tuple[int, ...] = DIFFICULTY_LEVELS

    def __init__(self, manifest_path: Path = MANIFEST_PATH, *, check_digests: bool = True) -> None:
        manifest = load_manifest(Path(manifest_path))
        if check_digests:
            corpus = load_corpus()
            stale = [m for m, d in manifest["digests"].items() if corpus[m].digest != d]
            if stale:
                raise RuntimeError(
                    f"manifest is stale for modules {stale}; regenerate it with "
                    "`python -m forgegym.envs.bugfix.generator`"
                )
        self._entries: dict[str, dict[str, Any]] = {t["id"]: t for t in manifest["tasks"]}
        super().__init__({i: int(e["level"]) for i, e in self._entries.items()})

    def entry(self, task_id: str) -> dict[str, Any]:
        """The manifest entry of ``task_id`` (a copy)."""
        if task_id not in self._entries:
            raise UnknownTaskError(task_id)
        return json.loads(json.dumps(self._entries[task_id]))

    def build(self, task_id: str) -> Task:
        return build_task(self._entries[task_id])


def bank_stats(bank: BugfixTaskBank) -> dict[str, int]:
    """Tasks per mutation operator (the bug kinds the bank serves), for ``tasks verify``."""
    counts: dict[str, int] = {}
    for task_id in bank.ids():
        entry = bank.entry(task_id)
        # A generated task lists its mutations as triples, a composed real-project task
        # as ``{"file", "mutation"}`` records; a single real-project task has one.
        for mutation in entry.get("mutations") or [entry["mutation"]]:
            _function, operator, _site = (
                mutation["mutation"] if isinstance(mutation, dict) else mutation
            )
            counts[operator] = counts.get(operator, 0) + 1
    return dict(sorted(counts.items()))
