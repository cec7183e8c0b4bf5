"""Statement styles of real-bank tasks: how much of the bug's location a task's text gives.

The factory writes one report per task (``entry["report"]``): the failing tests and
pytest's traceback of each, down to the mutated line inside the library, under a title
that names the mutated function. That tells a model where the bug is. Issue 39 asks for
styles that hide more, crossed with the bug kind as levels:

* ``traceback``: the report as built (the title names the function; frames inside the
  library down to the bug);
* ``assertion``: the failing tests and their own code up to the failing line, with the
  error lines (``E ...``) only: no frame inside the library, no function named;
* ``symptom``: a short report in words, built from each failing test's name and its
  error line: no code, no frame, no function named.

Each style adds :data:`LEVEL_OFFSET` to a task's feature level (the factory's levels
1-4), so ``statements="all"`` serves levels 1-6. ``benchmarks/statement_levels.py``
checks that a higher offset is harder for a localiser that reads only the statement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LEVEL_OFFSET",
    "STATEMENT_STYLES",
    "FailingTest",
    "parse_report",
    "render_statement",
    "statement_styles",
]

#: The styles, from most to least located.
STATEMENT_STYLES: tuple[str, ...] = ("traceback", "assertion", "symptom")
#: What a style adds to a task's feature level.
LEVEL_OFFSET: dict[str, int] = {"traceback": 0, "assertion": 1, "symptom": 2}

_SEPARATOR = re.compile(r"^(_ )+_\s*$")
_SHORT_FRAME = re.compile(r"^[^\s:]+\.py:\d+: in \S")
_LOCATION = re.compile(r"^(?P<path>[^\s:]+\.py):\d+:(?: |$)", re.MULTILINE)
_FENCE = "```"
_CLOSING = (
    "Fix the code so they pass without breaking the tests that pass now. Other tests may "
    "check the same behaviour. The test files are read-only."
)
#: Most failing tests a symptom report lists (the rest are counted).
_SYMPTOM_TESTS = 3
_SYMPTOM_CHARS = 240


@dataclass(frozen=True)
class FailingTest:
    """One failing test of a report: its id and pytest's traceback text."""

    test_id: str
    traceback: str

    @property
    def sections(self) -> list[tuple[str | None, str]]:
        """The traceback's frames as ``(file, text)``: pytest separates the frames of a
        long traceback with ``_ _ _`` lines (short frames, ``path:line: in name``, follow
        each other unseparated) and names each frame's ``path:line:``; the
        factory may have cut the first frames of a long report (``file`` None where a
        frame names no location)."""
        chunks: list[list[str]] = [[]]
        for line in self.traceback.splitlines():
            if _SEPARATOR.match(line):
                chunks.append([])
            elif _SHORT_FRAME.match(line) and any(x.strip() for x in chunks[-1]):
                chunks.append([line])  # short frames follow each other unseparated
            else:
                chunks[-1].append(line)
        out: list[tuple[str | None, str]] = []
        for chunk in chunks:
            text = "\n".join(chunk).strip("\n")
            located = _LOCATION.search(text)
            out.append((located.group("path") if located else None, text))
        return out

    @property
    def own_frames(self) -> str:
        """The frames in the test's own file (its code down to the failing line), and
        nothing inside the library."""
        own_file = self.test_id.partition("::")[0]
        return "\n\n".join(text for path, text in self.sections if path == own_file).rstrip()

    @property
    def error_lines(self) -> list[str]:
        """The ``E`` lines of the last frame that has any: the exception and, for an
        assertion, pytest's explanation of the compared values."""
        for _, text in reversed(self.sections):
            found = [line for line in text.splitlines() if line.startswith("E ")]
            if found:
                return found
        return []

    @property
    def error_summary(self) -> str:
        """The first error line without its ``E`` margin, shortened."""
        lines = self.error_lines
        if not lines:
            return "an error"
        text = lines[0][1:].strip()
        return text if len(text) <= _SYMPTOM_CHARS else text[: _SYMPTOM_CHARS - 3] + "..."


def parse_report(report: str) -> list[FailingTest]:
    """The failing tests of a factory report, each with its fenced traceback."""
    tests: list[FailingTest] = []
    lines = report.splitlines()
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and "::" in lines[i] and lines[i + 1].strip() == _FENCE:
            test_id, body = lines[i].strip(), []
            i += 2
            while i < len(lines) and lines[i].strip() != _FENCE:
                body.append(lines[i])
                i += 1
            tests.append(FailingTest(test_id, "\n".join(body)))
        i += 1
    return tests


def _test_name(test_id: str) -> str:
    """``tests/test_x.py::TestA::test_b[p]`` -> ``TestA.test_b[p]``."""
    return ".".join(test_id.split("::")[1:]) or test_id


def render_statement(entry: dict[str, Any], style: str) -> tuple[str, str]:
    """``(title, description)`` of a manifest entry in ``style``."""
    if style not in LEVEL_OFFSET:
        raise ValueError(f"statement: expected one of {list(STATEMENT_STYLES)}, got {style!r}")
    project, version = entry["project"], entry["version"]
    if style == "traceback":
        parts = entry.get("mutations") or [{"mutation": entry["mutation"]}]
        named = " and ".join(dict.fromkeys(f"`{p['mutation'][0]}`" for p in parts))
        return f"Fix {named} in {project} {version}", entry["report"]
    title = f"Fix a bug in {project} {version}"
    failing = parse_report(entry["report"])
    if style == "assertion":
        parts = [f"Users of {project} report a bug. These tests fail:", ""]
        for test in failing:
            own = test.own_frames
            errors = [line for line in test.error_lines if line not in own.splitlines()]
            body = "\n".join(part for part in (own, "\n".join(errors)) if part)
            parts += [test.test_id, _FENCE, body or "(no traceback)", _FENCE, ""]
        parts.append(_CLOSING)
        return title, "\n".join(parts)
    shown = failing[:_SYMPTOM_TESTS]
    parts = [f"Users of {project} report a bug."]
    for test in shown:
        parts.append(
            f"- `{_test_name(test.test_id)}` in `{test.test_id.partition('::')[0]}` "
            f"fails with: {test.error_summary}"
        )
    if len(failing) > len(shown):
        parts.append(f"- and {len(failing) - len(shown)} more failing tests")
    parts += ["", _CLOSING]
    return title, "\n".join(parts)


def statement_styles(value: str | Sequence[str]) -> tuple[str, ...]:
    """The styles a bank serves: one style, ``"all"``, or a sequence of styles."""
    styles = STATEMENT_STYLES if value == "all" else (value,) if isinstance(value, str) else value
    if not isinstance(styles, tuple | list) or not styles:
        raise ValueError(
            f"statements: expected 'all', a style or a list of {list(STATEMENT_STYLES)}, "
            f"got {value!r}"
        )
    unknown = [s for s in styles if s not in LEVEL_OFFSET]
    if unknown:
        raise ValueError(
            f"statements: unknown style {unknown[0]!r}; expected {list(STATEMENT_STYLES)}"
        )
    return tuple(dict.fromkeys(styles))
