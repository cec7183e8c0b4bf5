"""Navigation over a workspace's files: tree, numbered reads, bounded search, outlines,
path escapes, and the observation budget's section fitting."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgegym.core.actions import CODE_ACTIONS, ActionSet, ReadAction, SearchAction
from forgegym.core.navigation import (
    NavigationError,
    Section,
    check_pattern,
    fit_sections,
    list_tree,
    outline,
    read_lines,
    render_outline,
    search_files,
)

FILES = {
    "pkg/__init__.py": "from pkg.core import area\n",
    "pkg/core.py": "import math\n\n\nclass Shape:\n    def area(self, r):\n        return math.pi * r * r\n\n\ndef area(r):\n    return Shape().area(r)\n",
    "pkg/sub/deep.py": "X = 1\n",
    "tests/test_core.py": "from pkg import area\n\n\ndef test_area():\n    assert area(1) > 3\n",
}


def test_tree_lists_every_file_with_sizes_under_its_folder() -> None:
    tree = list_tree(FILES, None, max_chars=4000, label=lambda p: " (E)" if "core" in p else "")
    assert tree.splitlines()[0] == f"./: 4 files, {sum(map(len, FILES.values())):,} chars"
    assert f"pkg/core.py  {len(FILES['pkg/core.py'])} chars, 10 lines (E)" in tree
    assert "  pkg/sub/\n      pkg/sub/deep.py  6 chars, 1 lines" in tree
    sub = list_tree(FILES, "pkg/sub", max_chars=4000)
    assert "deep.py" in sub and "core.py" not in sub
    assert list_tree(FILES, "pkg/core.py", max_chars=4000).startswith("pkg/core.py  ")


def test_tree_over_its_budget_summarises_folders() -> None:
    files = {f"pkg/m{i:03}.py": "x = 1\n" * 10 for i in range(300)} | {"setup.py": "pass\n"}
    tree = list_tree(files, None, max_chars=600)
    assert len(tree) <= 600
    assert "pkg/  300 files, 18,000 chars" in tree and "setup.py" in tree
    assert "`list` a folder" in tree


def test_read_shows_numbered_exact_lines_of_a_range() -> None:
    text = read_lines(FILES, "pkg/core.py", 4, 6, max_chars=4000)
    assert text.splitlines() == [
        "pkg/core.py lines 4-6 of 10:",
        "     4\tclass Shape:",
        "     5\t    def area(self, r):",
        "     6\t        return math.pi * r * r",
    ]
    whole = read_lines(FILES, "pkg/core.py", max_chars=4000)
    assert whole.startswith("pkg/core.py lines 1-10 of 10:") and "not shown" not in whole
    assert read_lines(FILES, "pkg/core.py", 9, 500, max_chars=4000).startswith(
        "pkg/core.py lines 9-10 of 10:"
    )


def test_read_over_its_budget_cuts_at_a_line_and_says_where_to_continue() -> None:
    files = {"big.py": "".join(f"value_{i} = {i}\n" for i in range(5000))}
    text = read_lines(files, "big.py", 100, max_chars=2000)
    assert len(text) <= 2000
    rows = text.splitlines()[1:-1]
    last = int(rows[-1].split("\t")[0])
    assert rows[0] == "   100\tvalue_99 = 99" and last > 100
    assert f'read {{"path": "big.py", "start": {last + 1}}} to continue' in text
    minified = {"min.js.py": "x" * 50_000 + "\n"}
    cut = read_lines(minified, "min.js.py", max_chars=2000)
    assert len(cut) <= 2000 and "line 1 cut" in cut


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../etc/passwd", "leaves the workspace"),
        ("pkg/../../secret.py", "leaves the workspace"),
        ("/etc/passwd", "is absolute"),
        ("~/.ssh/id_rsa", "is absolute"),
        ("C:/x.py", "is absolute"),
        ("pkg/\x00.py", "NUL"),
        ("pkg/missing.py", "no file or folder 'pkg/missing.py'"),
        ("pkg", "is a folder"),
    ],
)
def test_paths_outside_the_workspace_or_unknown_are_clear_errors(path: str, message: str) -> None:
    with pytest.raises(NavigationError, match=message):
        read_lines(FILES, path, max_chars=4000)
    if message != "is a folder":
        with pytest.raises(NavigationError):
            list_tree(FILES, path, max_chars=4000)
        with pytest.raises(NavigationError):
            search_files(FILES, "x", path, max_chars=4000)


def test_read_range_errors() -> None:
    with pytest.raises(NavigationError, match="past its last line"):
        read_lines(FILES, "pkg/core.py", 11, max_chars=4000)
    with pytest.raises(NavigationError, match="not a range"):
        read_lines(FILES, "pkg/core.py", 5, 4, max_chars=4000)


def test_search_literal_and_regex_report_file_and_line() -> None:
    literal = search_files(FILES, "area(", max_chars=4000)
    assert literal.splitlines() == [
        "search 'area(' (literal) in the workspace: 5 hit(s) in 2 file(s)",
        "pkg/core.py:5: def area(self, r):",
        "pkg/core.py:9: def area(r):",
        "pkg/core.py:10: return Shape().area(r)",
        "tests/test_core.py:4: def test_area():",
        "tests/test_core.py:5: assert area(1) > 3",
    ]
    # Regex metacharacters are literal unless regex=True.
    assert "0 hit(s)" in search_files(FILES, "area(r|x)", max_chars=4000)
    regex = search_files(FILES, r"^def \w+\(r", "pkg", regex=True, max_chars=4000)
    assert regex.splitlines()[1:] == ["pkg/core.py:9: def area(r):"]


def test_search_hits_and_size_are_bounded() -> None:
    files = {"many.py": "hit = 1\n" * 500}
    text = search_files(files, "hit", max_chars=100_000, max_hits=50)
    assert "500 hit(s)" in text and text.count("many.py:") == 50
    assert "450 more hit(s) not shown" in text
    assert len(search_files(files, "hit", max_chars=700)) <= 700


def test_catastrophic_regex_stops_at_its_time_limit() -> None:
    # Exponential backtracking: unbounded, this search would not end in any useful time.
    files = {"early.py": "a, hit\n", **{f"f{i}.py": "a," * 40 + "\n" for i in range(50)}}
    text = search_files(files, r"(.*?,){11}P|hit", regex=True, max_chars=4000, time_limit_s=0.05)
    assert "ran out of its 0.05 s time limit" in text
    assert "early.py:1: a, hit" in text  # the hits found until then are kept


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("(a{1000}){1000}", "multiply"),
        ("a{5000}", "repetition count over"),
        ("a{99999999999}", "repetition count over"),
        ("(unclosed", "not a valid regular expression"),
        ("x" * 201, "limit is 200"),
    ],
)
def test_regex_patterns_over_the_bounds_are_refused(pattern: str, problem: str) -> None:
    found = check_pattern(pattern, regex=True)
    assert found is not None and problem in found
    assert check_pattern("(unclosed", regex=False) is None  # a literal needs no syntax


def test_malformed_navigation_arguments_are_parse_errors() -> None:
    actions = ActionSet(CODE_ACTIONS)
    for text, expected in [
        ('{"action": "read"}', "path"),
        ('{"action": "read", "path": "a.py", "start": 0}', "start"),
        ('{"action": "read", "path": "a.py", "start": 9, "end": 3}', "before `start`"),
        ('{"action": "read", "path": "a.py", "start": "ten"}', "start"),
        ('{"action": "search", "pattern": ""}', "pattern"),
        ('{"action": "search", "pattern": "(x", "regex": true}', "regular expression"),
        ('{"action": "list", "path": "a", "depth": 3}', "depth"),
    ]:
        result = actions.parse(text)
        assert result.error is not None and expected in result.error, (text, result.error)
    parsed = actions.parse(
        '[{"action": "search", "pattern": "(x"}, {"action": "read", "path": "a.py"}]'
    )
    assert parsed.actions == (
        SearchAction(action="search", pattern="(x"),
        ReadAction(action="read", path="a.py"),
    )


def test_outline_lists_classes_and_functions_with_lines() -> None:
    assert outline(FILES["pkg/core.py"]) == (
        (4, 0, "class Shape"),
        (5, 1, "def area(self, r)"),
        (9, 0, "def area(r)"),
    )
    assert outline("def broken(:\n") is None
    text = render_outline("pkg/core.py", FILES["pkg/core.py"], max_chars=4000)
    assert "     5:   def area(self, r)" in text
    many = "".join(f"def f{i}(a, *args, b=1, **kw):\n    pass\n" for i in range(400))
    short = render_outline("m.py", many, max_chars=500)
    assert len(short) <= 500 and "definitions left out" in short


texts = st.text(st.characters(codec="utf-8"), max_size=3000)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(texts, st.sampled_from([None, 0.2, 0.5, 0.9]), st.integers(0, 5)),
        min_size=1,
        max_size=7,
    ),
    st.integers(100, 6000),
)
def test_fitted_sections_never_exceed_the_budget(
    specs: list[tuple[str, float | None, int]], budget: int
) -> None:
    sections = [Section(text, share, order=order) for text, share, order in specs]
    fitted = fit_sections(sections, budget)
    assert len("\n\n".join(fitted)) <= budget
    fixed = [s.text for s in sections if s.share is None and s.text]
    if len("\n\n".join(t for t in (s.text for s in sections) if t)) <= budget:
        assert fitted == [s.text for s in sections if s.text]  # fits: nothing is cut
    elif sum(map(len, fixed)) + 2 * len(sections) < budget:
        assert all(t in fitted for t in fixed)  # fixed sections stay whole
