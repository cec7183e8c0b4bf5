"""Tasks that revert a real upstream fix (issue 39): the pure steps, and a bank built
offline from two vendored releases of textkit (0.9 with a bug its 1.0 fixed, as its
changelog says), graded through the Bugfix env."""

from __future__ import annotations

import ast
import gzip
import json
import shutil
import tarfile
from pathlib import Path

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.cli import main as cli_main
from forgegym.envs.bugfix.real import RealTaskBank
from forgegym.tasklib.factory import build_pinned, sha256_of
from forgegym.tasklib.factory.build import read_manifest
from forgegym.tasklib.factory.compose import apply_parts, entry_parts
from forgegym.tasklib.factory.revert import (
    KIND,
    Release,
    _missing_names,
    changed_lines,
    changelog_section,
    find_changelog,
    mentions_fix,
    names_function,
    resolve_parts,
    revert_bank,
)
from forgegym.tasklib.mutations import function_names, replace_function

FIXTURE = Path(__file__).parents[2] / "fixtures" / "factory" / "textkit-1.0"
NOOP = json.dumps({"action": "submit"})

CHANGES = """\
Changes
=======

1.0 (2026-01-02)
----------------

- Fix ``title_case`` keeping capitals inside words.

0.9 (2025-12-01)
----------------

- First release.
"""

#: textkit 0.9's module: ``title_case`` has the bug 1.0 fixed; ``pad_left`` differs in a
#: way no test sees; ``count_words`` was rewritten at length; ``chunk`` calls a helper
#: 1.0 removed; ``Counter.most_common`` differs in its docstring only.
EARLIER_CHANGES = {
    "        words.append(word[:1].upper() + word[1:].lower())": (
        "        words.append(word[:1].upper() + word[1:])"
    ),
    "    if missing > 0:": "    if missing >= 1:",
    '    """The n most frequent words, most frequent first (ties alphabetically)."""': (
        '    """The n most frequent words."""'
    ),
    '    if size <= 0:\n        raise ValueError("size must be positive")': (
        "    _check_size(size)"
    ),
    """    count = 0
    for word in text.split():
        if word:
            count += 1
    return count""": """    count = 0
    start = None
    for index, char in enumerate(text + " "):
        if char.isspace():
            if start is not None:
                count += 1
                start = None
        elif start is None:
            start = index
    if count < 0:
        raise AssertionError(count)
    if not text:
        return 0
    return count""",
}
HELPER = """

def _check_size(size):
    if size <= 0:
        raise ValueError("size must be positive")
"""


def test_the_changelog_section_between_two_releases() -> None:
    assert find_changelog(["setup.cfg", "docs/changelog.rst", "CHANGES.rst"]) == "CHANGES.rst"
    assert find_changelog(["HISTORY.md", "textkit/core.py"]) == "HISTORY.md"
    assert find_changelog(["textkit/news.py"]) is None
    section = changelog_section(CHANGES, "1.0", "0.9")
    assert section is not None and "title_case" in section and "First release" not in section
    assert mentions_fix(section) and names_function(section, "title_case")
    assert not names_function(section, "title")
    assert names_function("- Fixed ``Counter.feed`` on empty text", "Counter.feed")
    # oldest first: everything after the older heading
    oldest_first = "0.9\n- First release.\n\n1.0\n- Fix a crash.\n"
    assert (
        changelog_section(oldest_first, "1.0", "0.9") == "- First release.\n\n1.0\n- Fix a crash."
    )
    # no heading of the newer release (unreleased): from the top
    assert "Fix" in (changelog_section(CHANGES, "1.1", "0.9") or "")
    assert changelog_section(CHANGES, "1.0", "0.7") is None
    assert not mentions_fix("- Added a prefix option.\n- Documented chunk.")
    # a bullet that names the version is not its heading
    assert changelog_section("- since 0.9 the API is stable\n1.0\n- fix", "1.1", "0.9") is None


def test_small_differences_and_names_the_module_lacks() -> None:
    assert changed_lines("a\nb\nc\n", "a\nB\nc\nd\n") == 3
    module = ast.parse("import os\nLIMIT = 3\n\ndef f(x):\n    return x\n")
    assert _missing_names("def g(y):\n    return f(y) + LIMIT + len(os.sep)\n", module) == []
    assert _missing_names("def g(y):\n    return _helper(y)\n", module) == ["_helper"]
    # a private method a refactoring removed (V never mentions it)
    klass = ast.parse("class C:\n    def f(self):\n        return self._kept()\n")
    method = "def g(self):\n    self._kept()\n    return self.__touch() + self.__len__()\n"
    assert _missing_names(method, klass) == ["self.__touch"]
    # another class's __touch is not this class's (name mangling)
    two = ast.parse(
        "class B:\n    def __touch(self):\n        self._kept()\n\n\nclass C:\n    pass\n"
    )
    assert _missing_names(method, two, "C") == ["self.__touch"]
    assert _missing_names(method, two, "B") == []
    source = "class A:\n    # why\n    def f(self):\n        return 1\n"
    assert function_names(source) == ["A.f"]
    replaced = replace_function(source, "A.f", "def f(self):\n    return 2\n")
    assert replaced == "class A:\n    # why\n    def f(self):\n        return 2\n"
    with pytest.raises(KeyError):
        replace_function(source, "A.g", "def g(self):\n    pass\n")
    with pytest.raises(ValueError, match="one function"):
        replace_function(source, "A.f", "x = 1\n")
    # a reverted part is applied by its definition, a mutant part by its mutation
    part = {"file": "m.py", "function": "A.f", "definition": "def f(self):\n    return 2\n"}
    assert apply_parts({"m.py": source}, [part]) == {"m.py": replaced}
    with pytest.raises(ValueError, match="without its definition"):
        apply_parts({"m.py": source}, [{k: v for k, v in part.items() if k != "definition"}])


def _pack(folder: Path, cache: Path, name: str) -> Path:
    path = cache / f"{name}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        archive.add(folder, arcname=name, filter=lambda i: None if "__pycache__" in i.name else i)
    return path


@pytest.fixture(scope="module")
def reverted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[dict], dict]:
    base = tmp_path_factory.mktemp("revert")
    cache = base / "cache"
    cache.mkdir()
    newer = base / "src" / "textkit-1.0"
    shutil.copytree(FIXTURE, newer, ignore=shutil.ignore_patterns("__pycache__"))
    (newer / "CHANGES.rst").write_text(CHANGES)
    _pack(newer, cache, "textkit-1.0")
    older = base / "src" / "textkit-0.9"
    shutil.copytree(newer, older)
    core = older / "textkit" / "core.py"
    text = core.read_text()
    for before, after in EARLIER_CHANGES.items():
        assert before in text
        text = text.replace(before, after)
    core.write_text(text + HELPER)
    (older / "PKG-INFO").write_text((older / "PKG-INFO").read_text().replace("1.0", "0.9"))
    releases = [Release("0.9", sha256_of(_pack(older, cache, "textkit-0.9")))]
    # 0.8: 0.9 with clamp changed too, and no heading in the changelog
    oldest = base / "src" / "textkit-0.8"
    shutil.copytree(older, oldest)
    core = oldest / "textkit" / "core.py"
    core.write_text(core.read_text().replace("if value > high:", "if value >= high:"))
    releases.append(Release("0.8", sha256_of(_pack(oldest, cache, "textkit-0.8"))))
    out = base / "bank"
    build_pinned("textkit", "1.0", out, cache_dir=cache, seed=3, max_candidates=24)
    asked: list[tuple[str, str, int]] = []

    def lister(project: str, before: str, limit: int) -> list[Release]:
        asked.append((project, before, limit))
        return releases[:limit]

    (stats,) = revert_bank(out, releases=2, cache_dir=cache, lister=lister)
    assert asked == [("textkit", "1.0", 2)]
    summary = json.loads((out / "textkit-1.0.reverted.json").read_text())
    assert summary == {**summary, **stats.to_json()}
    return cache, out, read_manifest(out / "textkit-1.0.reverted.jsonl.gz"), summary


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_fixed_function_is_kept_and_the_others_dropped_by_reason(reverted) -> None:
    _, out, entries, summary = reverted
    (entry,) = entries
    assert entry["kind"] == KIND and entry["mutation"] == ["title_case", KIND, 0]
    assert entry["id"] == f"real/textkit/1.0/{KIND}/textkit/core.py::title_case@0.9"
    assert entry["reverts"] == [
        {
            "file": "textkit/core.py",
            "function": "title_case",
            "from_version": "0.9",
            "from_sha256": sha256_of(out.parent / "cache" / "textkit-0.9.tar.gz"),
        }
    ]
    assert entry["changelog"] == {"file": "CHANGES.rst", "names_function": True}
    assert entry["f2p"] == ["tests/test_core.py::test_title_case"]
    assert "tests/test_core.py::test_chunk" in entry["p2p"]
    assert "`title_case`" in entry["report"] and "Hello WORLD" in entry["report"]
    assert 1 <= entry["level"] <= 4
    # coordinates only: the earlier release's code is not in the manifest
    raw = gzip.decompress((out / "textkit-1.0.reverted.jsonl.gz").read_bytes()).decode()
    assert "word[1:])" not in raw and "definition" not in raw
    assert summary["candidates"] == 9 and summary["kept"] == 1
    assert summary["kept_naming_function"] == 1
    assert summary["dropped"] == {
        "no_changelog_fix": 5,
        "too_large": 1,
        "missing_name": 1,
        "no_failure": 1,
    }
    assert summary["releases"]["0.9"] == {
        "candidates": 4,
        "kept": 1,
        "changelog": "mentions a fix",
    }
    assert summary["releases"]["0.8"]["changelog"] == "no section"


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_env_grades_a_reverted_fix(reverted, tmp_path: Path, monkeypatch) -> None:
    cache, out, entries, _ = reverted
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    monkeypatch.setenv("FORGEGYM_BEHAVIOUR_DIR", str(tmp_path / "behaviour"))
    (entry,) = entries
    bank = RealTaskBank(out, cache_dir=cache, behaviour=False)
    task = bank.get(entry["id"])
    assert task.metadata["kind"] == KIND
    ((path, pristine),) = task.reference.items()
    assert "word[1:].lower()" in pristine and "word[1:].lower()" not in task.files[path]
    assert "word[:1].upper() + word[1:])" in task.files[path]
    # the earlier definition comes from the pinned sdist of 0.9
    (part,) = resolve_parts(entry, cache)
    assert apply_parts(task.reference, [part])[path] == task.files[path]
    assert entry_parts(entry)[0].keys() == {"file", "function", "from_version", "from_sha256"}
    env = gym.make("Forge/Bugfix-v0", bank=str(out), max_steps=1)
    try:
        fix = {"action": "edit", "edits": [{"path": path, "content": pristine}]}
        (full, info), (noop, ninfo) = env.unwrapped.grade_completions(
            entry["id"], [json.dumps(fix), NOOP]
        )
        assert env.unwrapped.solved(info), info["reward_breakdown"]
        assert not env.unwrapped.solved(ninfo) and noop < full
    finally:
        env.close()


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_cli_names_its_mistakes(reverted, tmp_path: Path, capsys) -> None:
    assert cli_main(["tasks", "revert", str(tmp_path)]) == 2
    assert "not a bank folder" in capsys.readouterr().err
    _, out, _, _ = reverted
    assert cli_main(["tasks", "revert", str(out), "--project", "nothing"]) == 2
    assert "no project to revert" in capsys.readouterr().err
