"""Every numeric limit a task text states is the limit its gate applies: a refactoring
that goes exactly to the stated limit passes, one past it is gated (static checks)."""

from __future__ import annotations

import re

import pytest

from forgegym.envs.refactor.integrity import integrity_findings
from forgegym.envs.refactor.kinds import kinds
from forgegym.envs.refactor.spec import RefactorSpec
from forgegym.envs.refactor.structure import structure_score

#: The limit phrases task texts use. A number in a text outside these phrases (and file
#: or module names) would be a limit no test ties to a gate.
_ADDED = re.compile(r"without adding more than (\d+) functions")
_AT_MOST = re.compile(r"has complexity at most (\d+)")
_FACT = re.compile(r"has cyclomatic complexity (\d+)")
_DEFINITION = re.compile(r"\(McCabe: 1 \+ branches \+ boolean operands\)")


def _specs() -> list[RefactorSpec]:
    out: list[RefactorSpec] = []
    for kind, build in sorted(kinds().items()):
        for level in (1, 2, 3):
            specs = build(level) if kind in ("reduce_complexity", "state_to_object") else []
            out.extend(specs[:4])
    from forgegym.envs.refactor.kinds import specs_for_module

    for kind in ("split_package", "rename_alias", "dead_code", "extract_helper"):
        for level in (1, 2, 3):
            for module in ("stats", "money", "text_tools", "level_utils"):
                out.extend(specs_for_module(kind, level, module)[:1])
    return out


SPECS = _specs()


def _after(spec: RefactorSpec) -> dict[str, str]:
    files = {p: c for p, c in spec.files.items() if p not in spec.deleted}
    files.update(spec.reference)
    return {p: c for p, c in files.items() if p not in spec.visible_tests}


def _with_helpers(files: dict[str, str], path: str, n: int) -> dict[str, str]:
    """``files`` with ``n`` more (trivial, private) top-level functions in ``path``."""
    extra = "".join(f"\n\ndef _extra_helper_{i}(items):\n    return items\n" for i in range(n))
    return {**files, path: files[path] + extra}


def _added_by_reference(spec: RefactorSpec) -> int:
    def count(files: dict[str, str]) -> int:
        return sum(
            len(re.findall(r"^def ", t, re.M)) for p, t in files.items() if p.endswith(".py")
        )

    starting = {p: spec.files[p] for p in spec.editable}
    return count(_after(spec)) - count(starting)


def test_the_sample_covers_the_limit_phrases() -> None:
    assert any(_ADDED.search(s.description) for s in SPECS)
    assert any(_AT_MOST.search(s.description) for s in SPECS)


@pytest.mark.parametrize(
    "spec", [s for s in SPECS if _ADDED.search(s.description)], ids=lambda s: s.task_id
)
def test_adding_exactly_the_stated_number_of_functions_is_allowed(spec: RefactorSpec) -> None:
    match = _ADDED.search(spec.description)
    assert match is not None
    limit = int(match.group(1))
    starting = {p: spec.files[p] for p in spec.editable}
    (path,) = spec.reference
    room = limit - _added_by_reference(spec)
    assert room >= 0, "the reference itself adds more functions than the text allows"
    at_limit = _with_helpers(_after(spec), path, room)
    past_limit = _with_helpers(_after(spec), path, room + 1)
    found = integrity_findings(at_limit, starting, spec.original, spec.integrity)
    assert not [f for f in found if f.startswith("function_explosion")], found
    found = integrity_findings(past_limit, starting, spec.original, spec.integrity)
    assert any(f.startswith("function_explosion") for f in found), found


@pytest.mark.parametrize(
    "spec", [s for s in SPECS if _AT_MOST.search(s.description)], ids=lambda s: s.task_id
)
def test_the_stated_complexity_bound_is_the_structure_bound(spec: RefactorSpec) -> None:
    match = _AT_MOST.search(spec.description)
    assert match is not None
    bound = int(match.group(1))
    stated = [r for r in spec.structure if r["req"] == "max_complexity"]
    assert [r["bound"] for r in stated] == [bound]
    # No requirement the text does not state is stricter than the stated one.
    for req in spec.structure:
        if "bound" in req:
            assert req["bound"] >= bound, req
    # A function exactly at the bound meets it.
    branches = "".join(f"    if items == {i}:\n        return {i}\n" for i in range(bound - 1))
    at_bound = f"def _at_bound(items):\n{branches}    return None\n"
    (path,) = spec.reference
    files = {**_after(spec), path: _after(spec)[path] + "\n\n" + at_bound}
    score, missed = structure_score(files, spec.structure)
    assert score == 1.0, missed
    one_more = at_bound.replace(
        "    return None\n", "    if items == -1:\n        return -1\n    return None\n"
    )
    files = {**_after(spec), path: _after(spec)[path] + "\n\n" + one_more}
    assert structure_score(files, spec.structure)[0] < 1.0


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.task_id)
def test_every_number_in_a_task_text_is_a_known_limit_or_fact(spec: RefactorSpec) -> None:
    text = spec.description
    for pattern in (_ADDED, _AT_MOST, _FACT, _DEFINITION):
        text = pattern.sub("", text)
    # File, module and identifier names may hold digits; free-standing numbers may not.
    names = re.sub(r"`[^`]*`", "", text)
    assert re.findall(r"(?<![\w.])\d+(?![\w.])", names) == [], spec.description
