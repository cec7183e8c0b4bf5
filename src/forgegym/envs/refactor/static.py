"""Refactor's static analysis of a submission: the public API it keeps, the gates its
source fires (compile, integrity, anti-hack scans), the lint credit and what a trusted
static-analysis worker (:mod:`.offload`) computes for the grader.

Trusted parent-side code only: model code never runs here.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from forgegym.envs.refactor.analysis import api_surface
from forgegym.envs.refactor.integrity import integrity_findings
from forgegym.envs.refactor.scan import scan_submission  # noqa: F401  (moved to .scan; old path kept)
from forgegym.envs.refactor.structure import structure_score
from forgegym.rewards import bounded
from forgegym.rewards.lint import LintError, LintFinding, lint_sources


def api_score(
    files: Mapping[str, str], api: Sequence[Mapping[str, Any]], original: Mapping[str, str]
) -> tuple[float, list[str]]:
    """Fraction of the expected public names present, with the original signature, at
    their import paths (libcst), and what is missing or changed. A ``new`` entry (a path
    the refactoring creates) only counts against the API when it exists with another
    signature; its absence is missing structure."""
    if not api:
        return 1.0, []
    surfaces: dict[str, Any] = {}
    originals: dict[str, Any] = {}
    missing: list[str] = []
    for entry in api:
        module = entry["module"]
        if module not in surfaces:
            surfaces[module] = api_surface(files, module) or {}
        root = module.split(".")[0]
        if root not in originals:
            originals[root] = api_surface(original, root) or {}
        have = surfaces[module].get(entry["name"])
        like = originals[root].get(entry.get("like", entry["name"]))
        label = f"{module}.{entry['name']}"
        if have is None:
            if not entry.get("new"):
                missing.append(f"{label} missing")
        elif like is not None and have.kind != like.kind:
            missing.append(f"{label} is a {have.kind}, was a {like.kind}")
        elif (
            like is not None
            and have.signature != like.signature
            and not (entry.get("alias") and have.signature == "(*args, **kwargs)")
        ):
            missing.append(f"{label}{have.signature} != original {like.signature}")
    return 1.0 - len(missing) / len(api), missing


def grounded_note(text: str, focus: Sequence[str]) -> bool:
    """A review names the module and at least one function the refactoring touches."""
    if not focus:
        return False
    lowered = text.lower()
    words = set(re.findall(r"[a-z_][a-z0-9_]*", lowered))
    return focus[0].lower() in lowered and any(f.lower() in words for f in focus[1:] or focus)


def present_targets(files: Mapping[str, str], steps: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Whether each step's target exists in ``files`` (libcst API surface)."""
    surfaces: dict[str, Any] = {}
    out = []
    for s in steps:
        module, _, name = str(s["t"]).partition(":")
        if module not in surfaces:
            surfaces[module] = api_surface(files, module) or {}
        out.append(name.split(".")[0] in surfaces[module])
    return out


def finding_keys(findings: Sequence[LintFinding]) -> Counter[tuple[str, str]]:
    return Counter((f.code, f.message) for f in findings)


def static_gates(
    files: Mapping[str, str],
    starting: Mapping[str, str],
    original: Mapping[str, str],
    integrity: Mapping[str, Any],
) -> tuple[list[str], list[str]]:
    """The static gates of a submission's ``files`` (see the module): over the
    parent's limits, a file that does not compile, integrity problems."""
    gates: list[str] = []
    notes: list[str] = []
    problem = bounded.files_problem(dict(files))
    if problem is not None:
        # Too big or too deep to check: "cannot verify" gates like every other family.
        return ["unverifiable"], [f"unverifiable: {problem}"]
    for path, text in sorted(files.items()):
        if not path.endswith(".py"):
            continue
        error = compile_error(text, path)
        if error is not None:
            return ["compile_error"], [f"{path} does not compile: {error}"]
    problems = integrity_findings(files, starting, original, integrity)
    if problems:
        gates.append("hack_flagged")
        # Every problem as "hack: <kind>...", what forgegym.play.telemetry counts per kind.
        notes.extend(p if p.startswith("hack: ") else f"hack: {p}" for p in problems[:6])
    return gates, notes


def lint_credit(starting: Mapping[str, str], files: Mapping[str, str]) -> float:
    """The lint credit of ``files`` over the ``starting`` files: 1 minus 0.25 per new
    ruff finding (rule and message, as a multiset), at least 0; 1 when ruff cannot run."""
    before_key = tuple(sorted(starting.items()))
    submitted = tuple(sorted(files.items()))
    try:
        before = finding_keys(lint_cached(before_key))
        # The starting files again (a no-op): ruff's findings are a function of the
        # files, so the cached ones are this submission's (not on the reference path).
        same = submitted == before_key and bounded.cache_enabled(*files.values())
        after = before if same else finding_keys(lint_sources(dict(files)))
    except LintError:
        return 1.0
    new = after - before
    return max(0.0, 1.0 - 0.25 * sum(new.values()))


def analyse(request: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the grader decides from a submission's text alone: its static gates
    and, when none fires, the hidden steps' targets present, the public API and the
    structure (JSON-plain; what :mod:`.offload`'s worker computes)."""
    gates, notes = static_gates(
        request["files"], request["starting"], request["original"], request["integrity"]
    )
    out: dict[str, Any] = {"gates": gates, "notes": notes}
    if not gates:
        files = request["all_files"]
        out["present"] = present_targets(files, request["steps"])
        out["api"] = list(api_score(files, request["api"], request["original"]))
        out["structure"] = list(structure_score(files, request["structure"]))
    return out


@functools.lru_cache(maxsize=512)
def lint_cached(files: tuple[tuple[str, str], ...]) -> tuple[LintFinding, ...]:
    return tuple(lint_sources(dict(files)))


@bounded.memoised
def compile_error(text: str, path: str) -> str | None:
    """Why ``text`` does not compile as ``path`` (``None`` when it does); cached by text
    (a task's starting files recur in every no-op and partial refactoring)."""
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return str(exc)
    return None
