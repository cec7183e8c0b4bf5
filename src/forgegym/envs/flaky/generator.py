"""Seeded scenario generator and the validated task bank of FlakyRepair.

A scenario id is ``flaky/<category>/<template>/d<difficulty>/<index>``; the id alone
regenerates the scenario in any process (the variant RNG is seeded from it). The
bank serves only scenarios listed in the precomputed, validated manifest
(``data/manifest.json``, built by :func:`build_manifest`): start state flaky under
the schedule (0 < p < 1), calm run passes, reference fix reaches p = 1.0, the mutant
makes the reference test fail and, where the template has a partial fix, the
partial is unflagged and its pass rate lies strictly between the baseline and 1.0. Each manifest entry carries a fingerprint of the
rendered files so a stale manifest is detected rather than trusted.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from forgegym.core.task import Task, UnknownTaskError
from forgegym.envs.flaky.hidden import FlakyHidden
from forgegym.envs.flaky.templates import CATEGORIES, TEMPLATES, Variant

__all__ = [
    "DIFFICULTIES",
    "GeneratorConfig",
    "MANIFEST_PATH",
    "distractors_of",
    "fingerprint",
    "generate",
    "test_ids_of",
]

DATA_DIR = Path(__file__).with_name("data")
MANIFEST_PATH = DATA_DIR / "manifest.json"
FAKES = (DATA_DIR / "fakes.py.txt").read_text(encoding="utf-8")
#: Difficulty levels: the unrelated helpers hiding the fault grow with the level
#: (:func:`distractors_of`: one at levels 1 and 2, two at level 3).
DIFFICULTIES: tuple[int, ...] = (1, 2, 3)


def distractors_of(difficulty: int) -> int:
    """The unrelated label helpers (and their tests) a scenario of ``difficulty`` shows:
    one at levels 1 and 2, two at level 3. Level 1 has one so that every scenario has
    another visible test whose last assertion a canary can contradict (issue #37, D6 of
    docs/design/006-canaries.md: with none, 189 of the 225 level-1 tasks could never
    carry a canary, and a policy could learn that level-1 tasks are safe to cheat on)."""
    return max(1, difficulty - 1)


@dataclass(frozen=True)
class GeneratorConfig:
    """What the generator may produce (frozen; call :meth:`validate`)."""

    categories: tuple[str, ...] = CATEGORIES
    difficulties: tuple[int, ...] = DIFFICULTIES
    per_template: int = 10
    reruns: int = 12

    def validate(self) -> GeneratorConfig:
        unknown = sorted(set(self.categories) - set(CATEGORIES))
        if not self.categories or unknown:
            raise ValueError(f"categories: unknown or empty {unknown or self.categories!r}")
        bad = sorted(set(self.difficulties) - set(DIFFICULTIES))
        if not self.difficulties or bad:
            raise ValueError(f"difficulties must be a non-empty subset of {DIFFICULTIES}")
        if isinstance(self.per_template, bool) or self.per_template < 1:
            raise ValueError(f"per_template must be >= 1, got {self.per_template!r}")
        if isinstance(self.reruns, bool) or self.reruns < 3:
            raise ValueError(f"reruns must be >= 3, got {self.reruns!r}")
        return self

    def candidate_ids(self) -> list[str]:
        """Every scenario id the config allows, in a fixed order."""
        return [
            f"flaky/{cat}/{tpl}/d{d}/{i}"
            for cat in self.categories
            for tpl in TEMPLATES[cat]
            for d in self.difficulties
            for i in range(self.per_template)
        ]


def test_ids_of(test_path: str, source: str) -> list[str]:
    """pytest node ids of the top-level ``test_*`` functions of a test module (file order)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [
        f"{test_path}::{node.name}"
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    ]


def fingerprint(files: dict[str, str]) -> str:
    """Content hash of a file mapping (stable across processes)."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode() + b"\0" + files[path].encode() + b"\0")
    return digest.hexdigest()[:16]


def _parse_id(task_id: str) -> tuple[str, str, int, int]:
    parts = task_id.split("/")
    if len(parts) != 5 or parts[0] != "flaky" or not parts[3].startswith("d"):
        raise UnknownTaskError(f"malformed flaky task id {task_id!r}")
    _, cat, tpl, diff, idx = parts
    if cat not in TEMPLATES or tpl not in TEMPLATES[cat]:
        raise UnknownTaskError(f"unknown category/template in {task_id!r}")
    try:
        difficulty, index = int(diff[1:]), int(idx)
    except ValueError:
        raise UnknownTaskError(f"malformed flaky task id {task_id!r}") from None
    if difficulty not in DIFFICULTIES or index < 0:
        raise UnknownTaskError(f"difficulty/index out of range in {task_id!r}")
    return cat, tpl, difficulty, index


@lru_cache(maxsize=2048)
def generate(task_id: str) -> Task:
    """Render the scenario ``task_id`` (deterministic; no validation)."""
    cat, tpl, difficulty, index = _parse_id(task_id)
    rng = random.Random(f"forgegym-flaky:{cat}/{tpl}/{difficulty}/{index}")
    v = Variant(rng=rng, distractors=distractors_of(difficulty))
    draft = TEMPLATES[cat][tpl](v)
    src, test = v.src, v.test_path
    files = {
        f"{v.pkg}/__init__.py": "",
        f"{v.pkg}/fakes.py": FAKES,
        src: draft.source,
        test: draft.test,
    }
    reference = {src: draft.source_fixed, test: draft.test_fixed}
    reference = {p: c for p, c in reference.items() if c != files[p]}
    old, new = draft.mutant
    if draft.source_fixed.count(old) != 1:
        raise ValueError(f"{task_id}: mutant anchor {old!r} is not unique")
    mutant = {src: draft.source_fixed.replace(old, new)}
    partial: dict[str, str] | None = None
    if draft.partial_source is not None or draft.partial_test is not None:
        partial = {}
        if draft.partial_source is not None:
            partial[src] = draft.partial_source
        if draft.partial_test is not None:
            partial[test] = draft.partial_test
    fault_path = src if draft.fault_file == "src" else test
    test_ids = test_ids_of(test, draft.test)
    target = f"{test}::{draft.target}"
    schedule_seed = zlib.crc32(task_id.encode()) % 10_000
    description = (
        f"The test `{target}` is flaky: it passes in a calm run but fails in some "
        "reruns (other orders, repeated runs, other time zones/locales/seeds, injected "
        "latency in the local fakes). Find the root cause and make it pass on every "
        "rerun without weakening it. Tests are editable, but removed or weakened "
        "assertions, skip/xfail/flaky markers, sleeps, longer waits (more scheduler "
        "turns, polls), retries, inflated timeouts and broad excepts are detected and score below doing nothing. The local fakes in "
        f"`{v.pkg}/fakes.py` are infrastructure and cannot be edited."
    )
    return Task(
        task_id=task_id,
        family="flaky",
        difficulty=difficulty,
        title=f"Repair the flaky test {draft.target}",
        description=description,
        files=files,
        editable_files=(src, test),
        visible_test_files=(test,),
        visible_test_ids=tuple(test_ids),
        hidden=FlakyHidden(
            category=cat,
            template=tpl,
            location=f"{fault_path}::{draft.fault_func}",
            target=target,
            test_ids=test_ids,
            test_paths=[test],
            source_path=src,
            mutant=mutant,
            partial=partial,
            schedule_seed=schedule_seed,
            summary=draft.summary,
        ),
        reference=reference,
        metadata={"category": cat, "template": tpl, "target": target},
    )


def build_manifest(
    config: GeneratorConfig,
    runner: Any,
    *,
    batch: int = 48,
    path: Path | None = None,
    reuse: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Generate and validate every candidate of ``config``; keep distinct scenarios
    (by fingerprint) and write the manifest to ``path`` if given. ``reuse``: a
    manifest built with the same rerun count whose entries are kept as they are for
    the scenarios that render the same files (same fingerprint), so that a change to
    some templates revalidates only the scenarios it changed."""
    from forgegym.envs.flaky.preflight import validate_many

    config.validate()
    kept: dict[str, dict[str, Any]] = {}
    if reuse is not None and int(reuse.get("reruns", -1)) == config.reruns:
        kept = {e["task_id"]: e for e in reuse.get("entries", [])}
    seen: set[str] = set()
    tasks = []
    for task_id in config.candidate_ids():
        task = generate(task_id)
        fp = fingerprint(task.files)
        if fp not in seen:
            seen.add(fp)
            tasks.append(task)
    fresh = [t for t in tasks if kept.get(t.task_id, {}).get("fingerprint") != fingerprint(t.files)]
    validated: dict[str, dict[str, Any]] = {}
    for start in range(0, len(fresh), batch):
        chunk = fresh[start : start + batch]
        for task, entry in zip(chunk, validate_many(runner, chunk, config.reruns), strict=True):
            entry["fingerprint"] = fingerprint(task.files)
            validated[task.task_id] = entry
    entries = [validated.get(t.task_id) or kept[t.task_id] for t in tasks]
    manifest = {"reruns": config.reruns, "entries": entries}
    if path is not None:
        path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


if __name__ == "__main__":  # python -m forgegym.envs.flaky.generator [per_template] [--reuse]
    import sys

    from forgegym.sandbox.runners import get_default_runner

    args = [a for a in sys.argv[1:] if a != "--reuse"]
    per = int(args[0]) if args else 12
    # --reuse: keep the shipped manifest's entries of the scenarios whose files did not
    # change (validation is the costly part: 33 sandbox runs per scenario).
    previous = (
        json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))
        if "--reuse" in sys.argv and MANIFEST_PATH.is_file()
        else None
    )
    built = build_manifest(
        GeneratorConfig(per_template=per, reruns=10),
        get_default_runner(),
        path=MANIFEST_PATH,
        reuse=previous,
    )
    valid = [e for e in built["entries"] if e["valid"]]
    print(f"{len(valid)} valid of {len(built['entries'])}")
