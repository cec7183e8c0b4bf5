"""Ruff findings, lint credit, diff statistics and no-op detection."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgegym.rewards.diff import DiffStats, diff_size_score, diff_stats, is_noop
from forgegym.rewards.lint import LintFinding, lint_files, lint_score, lint_sources, new_findings

CLEAN = "import os\n\n\ndef area(r):\n    return 3.14 * r * r\n\n\nprint(os.sep)\n"


def test_lint_finds_an_undefined_name_and_syntax_error() -> None:
    findings = lint_sources(
        {"pkg/geo.py": CLEAN.replace("3.14 * r * r", "PI * r * r"), "bad.py": "def f(:\n"}
    )
    undefined = [f for f in findings if f.code == "F821"]
    assert len(undefined) == 1
    assert undefined[0].path == "pkg/geo.py"
    assert (undefined[0].line, undefined[0].column) == (5, 12)
    assert "PI" in undefined[0].message and undefined[0].severe
    assert any(f.path == "bad.py" and f.severe for f in findings)
    assert undefined[0].render().startswith("pkg/geo.py:5:12: F821 ")


def test_lint_clean_and_non_python_files() -> None:
    assert lint_sources({"geo.py": CLEAN, "notes.txt": "not python ("}) == []
    assert lint_files([]) == []


def test_lint_ignores_workspace_config(tmp_path: Path) -> None:
    (tmp_path / "ruff.toml").write_text('[lint]\nignore = ["F821"]\nexclude = ["*.py"]\n')
    (tmp_path / "m.py").write_text("x = undefined\n")
    findings = lint_files(["m.py"], root=tmp_path)
    assert [f.code for f in findings] == ["F821"]
    assert findings[0].path == "m.py"


def test_lint_rejects_escaping_paths() -> None:
    with pytest.raises(ValueError, match="^files: "):
        lint_sources({"../escape.py": "x = 1\n"})


def _finding(code: str, line: int, message: str = "m", path: str = "a.py") -> LintFinding:
    return LintFinding(code=code, message=message, path=path, line=line, column=1)


def test_new_findings_ignore_line_shifts_and_count_duplicates() -> None:
    before = [_finding("F401", 1, "`os` unused"), _finding("B006", 10, "mutable default")]
    after = [
        _finding("F401", 1, "`os` unused"),
        _finding("B006", 14, "mutable default"),  # moved down by the patch: not new
        _finding("B006", 20, "mutable default"),  # a second one: new
        _finding("F821", 3, "Undefined name `y`"),
    ]
    assert [(f.code, f.line) for f in new_findings(before, after)] == [("B006", 20), ("F821", 3)]


def test_lint_score_charges_only_introduced_findings() -> None:
    before = [_finding("F401", 1), _finding("F821", 2)]
    assert lint_score(before, before) == 1.0
    assert lint_score(before, []) == 1.0  # fixing old findings earns nothing extra
    assert lint_score(before, [*before, _finding("F841", 5)]) == pytest.approx(0.9)
    assert lint_score([], [_finding("F821", 5, "x"), _finding("F821", 6, "y")]) == 0.0
    assert lint_score([], [_finding("invalid-syntax", 1)], severe_cost=0.3) == pytest.approx(0.7)


def test_lint_score_end_to_end() -> None:
    before = lint_sources({"geo.py": CLEAN})
    after = lint_sources({"geo.py": CLEAN.replace("3.14 * r * r", "PI * r * r")})
    assert lint_score(before, after) == pytest.approx(0.5)


def test_diff_stats_counts() -> None:
    before = {"a.py": "x = 1\ny = 2\nz = 3\n", "gone.py": "q = 1\nw = 2\n", "same.py": "s\n"}
    after = {"a.py": "x = 1\ny = 20\nz = 3\nextra = 4\n", "new.py": "n = 1\n", "same.py": "s\n"}
    stats = diff_stats(before, after)
    assert stats.files_changed == 3
    assert stats.lines_added == 3  # y = 20, extra = 4, n = 1
    assert stats.lines_removed == 3  # y = 2, q = 1, w = 2
    assert stats.lines_changed == 6
    assert "--- a/a.py\n+++ b/a.py\n" in stats.unified
    assert "--- /dev/null\n+++ b/new.py\n" in stats.unified
    assert "--- a/gone.py\n+++ /dev/null\n" in stats.unified
    assert "same.py" not in stats.unified
    assert diff_stats(before, before) == DiffStats(
        files_changed=0, lines_added=0, lines_removed=0, unified=""
    )


def test_diff_stats_counts_lines_that_look_like_headers() -> None:
    stats = diff_stats({"a.txt": "--- x\nkeep\n"}, {"a.txt": "keep\n+++ y\n"})
    assert (stats.lines_added, stats.lines_removed) == (1, 1)


def _stats(changed: int) -> DiffStats:
    return DiffStats(files_changed=1, lines_added=changed, lines_removed=0, unified="")


def test_diff_size_score_prefers_minimal_fixes() -> None:
    assert diff_size_score(_stats(0), 10) == 1.0
    assert diff_size_score(_stats(10), 10) == 1.0
    assert diff_size_score(_stats(20), 10) == pytest.approx(0.5)
    assert diff_size_score(_stats(30), 10) == pytest.approx(0.25)
    scores = [diff_size_score(_stats(n), 5) for n in range(0, 100, 7)]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < s <= 1.0 for s in scores)
    with pytest.raises(ValueError, match="^budget_lines: "):
        diff_size_score(_stats(1), 0)


def test_is_noop() -> None:
    code = {"m.py": "def f(x):\n    return x + 1\n"}
    assert is_noop(code, dict(code))
    assert is_noop(code, {"m.py": "# new comment\ndef f( x ):\n\n    return (x + 1)  # same\n"})
    assert not is_noop(code, {"m.py": "def f(x):\n    return x + 2\n"})
    assert not is_noop(code, {**code, "n.py": ""})
    assert not is_noop(code, {})
    broken = {"m.py": "def f(x:\n    return x\n"}
    assert is_noop(broken, {"m.py": "def f(x:  # hmm\n    return x\n"})
    assert not is_noop(broken, {"m.py": "def f(x):\n    return x\n"})
    assert is_noop({"r.txt": "a  b\n"}, {"r.txt": "a b"})


def test_one_ruff_run_for_a_batch_gives_each_mapping_its_own_findings() -> None:
    from forgegym.rewards.lint import lint_many

    batches = [
        {"pkg/__init__.py": "import os\n", "pkg/geo.py": CLEAN.replace("3.14", "PI")},
        {"bad.py": "def f(:\n", "notes.txt": "("},
        {},
        {"geo.py": CLEAN},
    ]
    found = lint_many(batches)
    assert found == [lint_sources(files) for files in batches]
    assert found[0] and found[1] and found[2] == [] and found[3] == []
    assert {f.path for f in found[0]} == {"pkg/__init__.py", "pkg/geo.py"}
    assert lint_many([]) == []


# Submissions of several modules whose findings depend on the project layout: an unused
# first-party import in an ``__init__.py`` (first-party: found in the project root or its
# ``src/``) reads differently from a third-party one.
MULTI_MODULE = [
    {"__init__.py": "import geo\n", "geo.py": CLEAN},
    {"pkg/__init__.py": "import geo\n", "geo.py": CLEAN},
    {"pkg/__init__.py": "import geo\nimport os\n", "src/geo.py": CLEAN},
    {"pkg/__init__.py": "from pkg.geo import area\n", "pkg/geo.py": CLEAN},
    {"pkg/__init__.py": "from .geo import area\n", "pkg/geo.py": CLEAN},
    {"geo.py": CLEAN, "use.py": "import os\nfrom geo import area\n\nprint(area(1))\n"},
    {"pkg/__init__.py": "import geo\n"},  # geo.py is another submission's file
    {"geo.py": CLEAN, "ruff.toml/x.py": "import os\n"},  # linted alone
    {"__init__.py": "", "geo.py": "import use\n", "use.py": "import geo\nx = y\n"},
]


def test_a_batch_lints_each_multi_module_submission_as_lint_sources_does() -> None:
    from forgegym.rewards.lint import lint_many

    found = lint_many(MULTI_MODULE)
    assert found == [lint_sources(files) for files in MULTI_MODULE]
    # The layout-dependent message: first-party in the first three, not in the seventh.
    hint = "consider removing, adding to `__all__`"
    assert [any(hint in f.message for f in fs) for fs in found[:3]] == [True] * 3
    assert not any(hint in f.message for f in found[6])
    assert lint_many(list(reversed(MULTI_MODULE))) == list(reversed(found))
