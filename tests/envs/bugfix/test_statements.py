"""Statement styles of real-bank tasks (issue 39): how much of the bug's location a
statement gives, and the levels that cross them with the factory's levels.

Rendered from the shipped manifests alone (no sdist needed); the bank's variants are
built from the vendored textkit bank."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.envs.bugfix.real import REAL_BANK_DIR, RealTaskBank, split_variant_id
from forgegym.envs.bugfix.statements import (
    LEVEL_OFFSET,
    STATEMENT_STYLES,
    parse_report,
    render_statement,
    statement_styles,
)
from forgegym.tasklib.factory.build import read_manifest
from forgegym.tasklib.factory.compose import is_main_manifest


@functools.cache
def _sample() -> list[dict]:
    """Every 20th entry of each project's built manifest (single mutants, whose reports
    are the factory's tracebacks; not the composed or reverted-fix manifests): every
    project, ~370 reports (read when a test asks, not at collection)."""
    return [
        entry
        for manifest in sorted(REAL_BANK_DIR.glob("*.jsonl.gz"))
        if is_main_manifest(manifest)
        for entry in read_manifest(manifest)[::20]
    ]


_LIBRARY_FRAME = re.compile(r"^(?P<path>[^\s:]+\.py):\d+:", re.MULTILINE)


def _library_frames(entry: dict, text: str) -> list[str]:
    """Locations in ``text`` outside the project's test files."""
    tests = {t.partition("::")[0] for t in entry["f2p"]}
    return [m["path"] for m in _LIBRARY_FRAME.finditer(text) if m["path"] not in tests]


def test_the_traceback_style_is_the_factorys_report() -> None:
    for entry in _sample():
        title, description = render_statement(entry, "traceback")
        assert description == entry["report"]
        assert f"`{entry['mutation'][0]}`" in title


@pytest.mark.parametrize("style", ["assertion", "symptom"])
def test_hiding_styles_name_no_library_frame_and_no_function(style: str) -> None:
    located = 0
    for entry in _sample():
        located += bool(_library_frames(entry, entry["report"]))
        title, description = render_statement(entry, style)
        assert not _library_frames(entry, description), (entry["id"], description)
        assert f"`{entry['mutation'][0]}`" not in title + description, entry["id"]
        # every failing test the report shows is still named
        for test in parse_report(entry["report"]):
            name = test.test_id if style == "assertion" else test.test_id.split("::")[-1]
            assert name in description or style == "symptom", entry["id"]
    assert located > 0.5 * len(_sample())  # the traceback style does name them


def test_the_symptom_style_shows_no_code_and_the_error() -> None:
    for entry in _sample():
        _, description = render_statement(entry, "symptom")
        assert "```" not in description
        failing = parse_report(entry["report"])
        assert failing[0].error_summary in description


def test_styles_and_their_levels() -> None:
    assert statement_styles("all") == STATEMENT_STYLES
    assert statement_styles(["symptom", "symptom"]) == ("symptom",)
    assert [LEVEL_OFFSET[s] for s in STATEMENT_STYLES] == [0, 1, 2]
    for bad in ("", "trace", ["traceback", "words"], 3):
        with pytest.raises(ValueError, match="statements"):
            statement_styles(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="statement"):
        render_statement(_sample()[0], "words")


def test_the_shipped_bank_serves_each_bug_once_per_style() -> None:
    plain, every = RealTaskBank(), RealTaskBank(statements="all")
    assert len(every) == 3 * len(plain)
    assert every.difficulty_levels == (1, 2, 3, 4, 5, 6)
    assert plain.difficulty_levels == (1, 2, 3, 4)
    entry_id = plain.ids()[0]
    for style in STATEMENT_STYLES:
        variant = entry_id if style == "traceback" else f"{entry_id}@{style}"
        assert variant in every.ids()
        assert split_variant_id(variant) == (entry_id, style)
        assert every.entry(variant) == plain.entry(entry_id)
    symptom_ids = every.ids(difficulty=6)
    assert symptom_ids and all(i.endswith("@symptom") for i in symptom_ids)


@pytest.mark.slow  # builds the textkit bank: sandbox jobs, ~15 s on 2 cores
@pytest.mark.sandbox
def test_a_variant_is_the_same_bug_told_differently(tmp_path: Path, monkeypatch) -> None:
    from tests.fixtures.textkit_bank import build_textkit_bank

    cache, out = build_textkit_bank(tmp_path)
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    bank = RealTaskBank(out, cache_dir=cache, behaviour=False, statements="all")
    entry_id = next(i for i in bank.ids() if "@" not in i)
    base = bank.get(entry_id)
    assert base.metadata["statement"] == "traceback" and base.metadata["kind"] == "mutant"
    for style in ("assertion", "symptom"):
        task = bank.get(f"{entry_id}@{style}")
        assert task.task_id == f"{entry_id}@{style}"
        assert task.metadata["statement"] == style
        assert task.difficulty == base.difficulty + LEVEL_OFFSET[style]
        assert (task.files, task.hidden, task.reference) == (
            base.files,
            base.hidden,
            base.reference,
        )
        assert task.description != base.description and task.title != base.title


def test_make_passes_statements_and_names_a_bad_one() -> None:
    env = gym.make("Forge/Bugfix-v0", bank="real", statements=["assertion"])
    try:
        ids = env.unwrapped.task_bank.ids()
        assert ids and all(i.endswith("@assertion") for i in ids)
    finally:
        env.close()
    with pytest.raises(ValueError, match="statements"):
        gym.make("Forge/Bugfix-v0", bank="real", statements="words")
    with pytest.raises(ValueError, match="statements"):
        gym.make("Forge/Bugfix-v0", statements="symptom")
