"""Navigating a workspace: a tree with sizes, numbered line ranges, bounded search and
outlines, and the observation budget that bounds what one observation shows.

Everything here runs in the trusted parent over the agent's workspace files (a
``path -> text`` mapping, the in-memory mirror of the workspace copy): nothing reads
the disk, so no path, ``..`` or symbolic link can reach a file outside the workspace,
and hidden checks (never in the workspace) are never shown. Every function is bounded
in its output (characters, hits) and, for regular expressions, in time and pattern
size: model text never makes the parent hang. Errors are :class:`NavigationError`
values with a message for the agent, never crashes.
"""

from __future__ import annotations

import ast
import hashlib
import posixpath
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "MAX_PATTERN_CHARS",
    "MAX_SEARCH_HITS",
    "REGEX_TIME_LIMIT_S",
    "NavigationError",
    "Section",
    "check_pattern",
    "closest_test_ids",
    "cut_text",
    "fit_sections",
    "list_tree",
    "match_test_ids",
    "mentioned_paths",
    "outline",
    "read_lines",
    "resolve_path",
    "search_files",
]

#: Longest search pattern accepted (literal or regular expression).
MAX_PATTERN_CHARS = 200
#: Most hits one search reports.
MAX_SEARCH_HITS = 50
#: Wall time one regular-expression search may take over the whole workspace.
REGEX_TIME_LIMIT_S = 1.0
#: Longest count of one ``{m,n}`` repetition, and of all counts multiplied, in a regular
#: expression: the ``regex`` module expands counted repetitions when it compiles (a
#: ``(a{1000}){1000}`` takes seconds to compile, before any timeout applies); within
#: these bounds a compile costs about 10 ms (measured).
_MAX_REPEAT = 1_000
_MAX_REPEAT_PRODUCT = 10_000
#: Characters of one line that a search matches against (minified lines are searched
#: in their first characters only) and shows per hit.
_MAX_LINE_CHARS = 4_000
_HIT_CHARS = 200
_REPEAT = re.compile(r"\{\s*(\d*)\s*(?:,\s*(\d*)\s*)?\}")


class NavigationError(ValueError):
    """A navigation action that cannot run (unknown path, escape, bad range); its
    message is shown to the agent as the action's error."""


def resolve_path(files: Mapping[str, str], path: str | None, *, allow_dir: bool) -> str:
    """Normalise ``path`` (``""`` is the workspace root) and check that it names a file
    of the workspace, or a folder holding some when ``allow_dir``.

    Raises:
        NavigationError: an absolute path, one with ``..`` that leaves the workspace, a
            NUL byte, or a path naming no file (or folder) of the workspace.
    """
    if path is None:
        return ""
    raw = path.strip()
    if "\x00" in raw:
        raise NavigationError(f"path {path!r} contains a NUL byte")
    if raw.startswith(("/", "\\", "~")) or (len(raw) > 1 and raw[1] == ":"):
        raise NavigationError(
            f"path {path!r} is absolute; give a path relative to the workspace root"
        )
    normal = posixpath.normpath(raw.replace("\\", "/")) if raw else "."
    if normal == ".." or normal.startswith("../") or "/../" in f"/{normal}/":
        raise NavigationError(f"path {path!r} leaves the workspace; only its files can be read")
    if normal == ".":
        if not allow_dir:
            raise NavigationError("path: name a file of the workspace")
        return ""
    if normal in files:
        return normal
    prefix = normal + "/"
    if any(p.startswith(prefix) for p in files):
        if allow_dir:
            return normal
        raise NavigationError(f"{normal!r} is a folder; `list` it, or `read` one of its files")
    raise NavigationError(
        f"no file or folder {normal!r} in the workspace (`list` shows its files; files "
        "outside the workspace, symbolic links pointing outside it included, are not part "
        "of it)"
    )


def _under(files: Mapping[str, str], folder: str) -> list[str]:
    if folder in files:
        return [folder]
    prefix = folder + "/" if folder else ""
    return sorted(p for p in files if p.startswith(prefix))


def _size(text: str) -> str:
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return f"{len(text):,} chars, {lines:,} lines"


def list_tree(
    files: Mapping[str, str],
    path: str | None = None,
    *,
    max_chars: int,
    label: Callable[[str], str] = lambda path: "",
) -> str:
    """A tree of the files under ``path`` with their sizes, within ``max_chars``.

    Each folder heads its files (full relative paths, so they can be read as shown).
    When the full tree does not fit, the folders are summarised one level down (file
    count and total size) so the agent can ``list`` one of them.
    """
    folder = resolve_path(files, path, allow_dir=True)
    paths = _under(files, folder)
    total = sum(len(files[p]) for p in paths)
    head = f"{folder or '.'}/: {len(paths):,} files, {total:,} chars"
    if folder in files:
        return f"{folder}  {_size(files[folder])}{label(folder)}"
    lines = [head]
    current_dir: str | None = None
    for p in paths:
        directory = posixpath.dirname(p)
        if directory != current_dir:
            current_dir = directory
            depth = directory.count("/") + 1 if directory else 0
            if directory and directory != folder:
                lines.append("  " * depth + f"{directory}/")
        depth = p.count("/") + 1
        lines.append("  " * depth + f"{p}  {_size(files[p])}{label(p)}")
    text = "\n".join(lines)
    if len(text) <= max_chars:
        return text
    # Summarise one level below ``folder``: its own files, and each subfolder's totals.
    children: dict[str, list[str]] = {}
    own: list[str] = []
    start = len(folder) + 1 if folder else 0
    for p in paths:
        rest = p[start:]
        if "/" in rest:
            children.setdefault(rest.split("/", 1)[0], []).append(p)
        else:
            own.append(p)
    lines = [head + " (summarised; `list` a folder to see its files)"]
    for name, members in sorted(children.items()):
        sub = f"{folder}/{name}" if folder else name
        size = sum(len(files[m]) for m in members)
        lines.append(f"  {sub}/  {len(members):,} files, {size:,} chars")
    lines.extend(f"  {p}  {_size(files[p])}{label(p)}" for p in own)
    return cut_text("\n".join(lines), max_chars, "entries", "`list` a folder to see part of it")


def read_lines(
    files: Mapping[str, str],
    path: str,
    start: int | None = None,
    end: int | None = None,
    *,
    max_chars: int,
) -> str:
    """Lines ``start``..``end`` (1-based, inclusive) of ``path``, numbered, within
    ``max_chars``; a cut says which lines are left and how to read them."""
    name = resolve_path(files, path, allow_dir=False)
    lines = files[name].split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    count = len(lines)
    first = 1 if start is None else start
    last = count if end is None else min(end, count)
    if first < 1 or (end is not None and end < first):
        raise NavigationError(
            f"read {name}: start={start}, end={end} is not a range (1 <= start <= end)"
        )
    if count == 0:
        return f"{name}: empty file"
    if first > count:
        raise NavigationError(f"read {name}: start={first} is past its last line ({count})")
    header = f"{name} lines {first}-{last} of {count}:"
    out = [header]
    used = len(header)
    shown_last = first - 1
    reserve = 160  # room for the continuation note
    for number in range(first, last + 1):
        text = lines[number - 1]
        row = f"{number:>6}\t{text}"
        if used + 1 + len(row) > max_chars - reserve:
            room = max_chars - reserve - used - 1
            if number == first and room > 80:
                # One line longer than the whole budget (minified code): show its start.
                cut = room - 60
                out.append(f"{row[:cut]} [... line {number} cut: {len(row) - cut:,} more chars]")
                shown_last = number
            break
        out.append(row)
        used += 1 + len(row)
        shown_last = number
    if shown_last < last:
        out.append(
            f"[lines {shown_last + 1}-{last} not shown (over this observation's budget): "
            f'read {{"path": "{name}", "start": {shown_last + 1}}} to continue]'
        )
    return "\n".join(out)


def check_pattern(pattern: str, regex: bool) -> str | None:
    """Why ``pattern`` cannot be searched for, or ``None``. A regular expression must
    compile (``regex`` module syntax, a superset of ``re``'s) within the repetition
    bounds; a literal only needs to be within :data:`MAX_PATTERN_CHARS`."""
    if not pattern:
        return "the pattern is empty"
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"the pattern is {len(pattern)} characters; the limit is {MAX_PATTERN_CHARS}"
    if not regex:
        return None
    product = 1
    for match in _REPEAT.finditer(pattern):
        for group in match.groups():
            if group:
                count = int(group) if len(group) <= 6 else _MAX_REPEAT + 1
                if count > _MAX_REPEAT:
                    return f"a repetition count over {_MAX_REPEAT} ({{{group}}})"
                product *= max(count, 1)
    if product > _MAX_REPEAT_PRODUCT:
        return f"repetition counts multiply to over {_MAX_REPEAT_PRODUCT}"
    try:
        _compile(pattern)
    except Exception as exc:  # noqa: BLE001 - any compile failure is the agent's error
        return f"not a valid regular expression: {exc}"
    return None


def _compile(pattern: str) -> object:
    import regex as regex_module

    return regex_module.compile(pattern, regex_module.VERSION0)


def search_files(
    files: Mapping[str, str],
    pattern: str,
    path: str | None = None,
    *,
    regex: bool = False,
    max_chars: int,
    max_hits: int = MAX_SEARCH_HITS,
    time_limit_s: float = REGEX_TIME_LIMIT_S,
) -> str:
    """Lines under ``path`` that contain ``pattern`` (a literal, or a regular expression
    matched line by line), as ``file:line: text``, at most ``max_hits`` of them and
    ``max_chars`` in all. A regular expression runs under ``time_limit_s`` in total (the
    ``regex`` module's timeout, per line with what is left): a search that runs out
    reports the hits found so far and says so."""
    problem = check_pattern(pattern, regex)
    if problem is not None:
        raise NavigationError(f"search: {problem}")
    folder = resolve_path(files, path, allow_dir=True)
    paths = _under(files, folder)
    compiled = _compile(pattern) if regex else None
    deadline = time.monotonic() + time_limit_s
    hits: list[str] = []
    total = 0
    matched_files: set[str] = set()
    timed_out = False
    for name in paths:
        for number, line in enumerate(files[name].split("\n"), start=1):
            probe = line[:_MAX_LINE_CHARS]
            if compiled is None:
                found = pattern in probe
            else:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                try:
                    found = compiled.search(probe, timeout=left) is not None  # type: ignore[attr-defined]
                except TimeoutError:
                    timed_out = True
                    break
            if found:
                total += 1
                matched_files.add(name)
                if len(hits) < max_hits:
                    shown = line.strip()
                    if len(shown) > _HIT_CHARS:
                        shown = shown[:_HIT_CHARS] + " [...]"
                    hits.append(f"{name}:{number}: {shown}")
        if timed_out:
            break
    kind = "regex" if regex else "literal"
    where = folder or "the workspace"
    head = f"search {pattern!r} ({kind}) in {where}: {total} hit(s) in {len(matched_files)} file(s)"
    notes: list[str] = []
    if timed_out:
        notes.append(
            f"[the regular expression ran out of its {time_limit_s:g} s time limit; the hits "
            "found until then are shown: search a `path`, or a literal]"
        )
    if total > len(hits):
        notes.append(
            f"[{total - len(hits)} more hit(s) not shown: narrow the pattern or the `path`]"
        )
    body = "\n".join([head, *hits])
    tail = "\n".join(notes)
    room = max_chars - len(tail) - 1
    if len(body) > room:
        body = cut_text(body, room, "hits", "narrow the pattern or the `path`")
    return body + ("\n" + tail if tail else "")


# ----------------------------------------------------------------- outlines
_OUTLINES: dict[str, tuple[tuple[int, int, str], ...] | None] = {}


def outline(source: str, filename: str = "<source>") -> tuple[tuple[int, int, str], ...] | None:
    """Classes and functions of ``source`` as ``(line, depth, signature)``, in order;
    ``None`` when it does not parse within the parser's bounds. Cached by content."""
    key = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    if key in _OUTLINES:
        return _OUTLINES[key]
    from forgegym.rewards import bounded

    tree = bounded.parse_or_none(source, filename)
    result: tuple[tuple[int, int, str], ...] | None = None
    if tree is not None:
        rows: list[tuple[int, int, str]] = []
        stack: list[tuple[ast.AST, int]] = [(node, 0) for node in reversed(tree.body)]
        while stack:
            node, depth = stack.pop()
            if isinstance(node, ast.ClassDef):
                rows.append((node.lineno, depth, f"class {node.name}"))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
                args = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
                if node.args.vararg:
                    args.append("*" + node.args.vararg.arg)
                args += [a.arg for a in node.args.kwonlyargs]
                if node.args.kwarg:
                    args.append("**" + node.args.kwarg.arg)
                rows.append((node.lineno, depth, f"{prefix} {node.name}({', '.join(args)})"))
            else:
                continue
            stack.extend((child, depth + 1) for child in reversed(node.body))
        result = tuple(rows)
    if len(_OUTLINES) >= 512:
        _OUTLINES.pop(next(iter(_OUTLINES)))
    _OUTLINES[key] = result
    return result


def render_outline(path: str, source: str, *, max_chars: int) -> str:
    """``path``'s outline (``line: def name(args)``, nested by indentation) within
    ``max_chars``; a cut says how many definitions are left and how to find them."""
    rows = outline(source, path)
    head = f"Outline of {path} ({_size(source)}):"
    if rows is None:
        return f"{head} not available (not valid Python, or over the parser's limits)"
    if not rows:
        return f"{head} no classes or functions"
    body = "\n".join(f"{line:>6}: {'  ' * depth}{text}" for line, depth, text in rows)
    return cut_text(
        f"{head}\n{body}", max_chars, "definitions", f'search or read {{"path": "{path}"}}'
    )


def mentioned_paths(text: str, files: Iterable[str]) -> list[str]:
    """The workspace files ``text`` names (a failure's frames, a bug report), in the
    order they first appear."""
    positions = []
    for path in files:
        index = text.find(path)
        if index >= 0:
            positions.append((index, path))
    return [path for _, path in sorted(positions)]


# ------------------------------------------------------------------ test ids
def match_test_ids(requested: Iterable[str], known: Sequence[str]) -> tuple[list[str], list[str]]:
    """The ids of ``known`` that ``requested`` selects, as pytest selects them, and the
    requests that select nothing.

    A request is an exact node id, a file (``tests/test_x.py``), a folder (``tests`` or
    ``tests/``) or a node-id prefix that ends at a ``::`` boundary: ``file::Class``
    selects the class's tests and ``file::test_f`` selects ``test_f`` and every
    parametrisation ``test_f[...]`` (but not ``test_f2``). The selected ids come in
    the order of ``known``, each once.
    """
    chosen: set[str] = set()
    unmatched: list[str] = []
    for raw in requested:
        request = raw.strip().rstrip("/")
        if not request:
            unmatched.append(raw)
            continue
        hits = [
            nodeid
            for nodeid in known
            if nodeid == request
            or nodeid.startswith((request + "::", request + "["))
            or ("::" not in request and nodeid.partition("::")[0].startswith(request + "/"))
        ]
        if hits:
            chosen.update(hits)
        else:
            unmatched.append(raw)
    return [nodeid for nodeid in dict.fromkeys(known) if nodeid in chosen], unmatched


def closest_test_ids(request: str, known: Sequence[str], *, limit: int = 5) -> list[str]:
    """Up to ``limit`` ids of ``known`` nearest to ``request``: those sharing its
    longest ``::``-prefix first, then by string similarity."""
    import difflib

    parts = request.split("::")
    for cut in range(len(parts), 0, -1):
        prefix = "::".join(parts[:cut])
        same = [k for k in known if k.startswith(prefix)]
        if same:
            ranked = difflib.get_close_matches(request, same, n=limit, cutoff=0.0)
            return ranked or same[:limit]
    return difflib.get_close_matches(request, list(known), n=limit, cutoff=0.0)


# ------------------------------------------------------------------ budget
def cut_text(text: str, max_chars: int, what: str, how: str) -> str:
    """``text`` within ``max_chars``: its head, cut at a line end where one is near,
    and a note of what was left out and how to see it."""
    if len(text) <= max_chars:
        return text
    note_template = "\n[... {n:,} characters of {what} left out: {how}]"
    note = note_template.format(n=len(text), what=what, how=how)
    room = max_chars - len(note)
    if room <= 0:
        return note.strip()[:max_chars]
    head = text[:room]
    newline = head.rfind("\n")
    if newline >= room // 2:
        head = head[:newline]
    note = note_template.format(n=len(text) - len(head), what=what, how=how)
    return (head + note)[:max_chars]


@dataclass
class Section:
    """One part of an observation for :func:`fit_sections`.

    ``share``: the fraction of what is left (after the fixed sections) that this
    section may take at most, allocated in ``order`` (lowest first; what a section
    leaves unused flows to the later ones); ``None`` marks a fixed section, always
    shown whole. ``what``/``how`` fill the cut note.
    """

    text: str
    share: float | None
    order: int = 0
    what: str = "this section"
    how: str = "read the files it names"


def fit_sections(sections: Sequence[Section], budget: int, *, joiner: str = "\n\n") -> list[str]:
    """The sections' texts, in their given order, cut so that joined with ``joiner``
    they fit ``budget`` characters (empty texts are dropped). Fixed sections are never
    cut unless they alone exceed the budget (then the result is cut at the end)."""
    present = [s for s in sections if s.text]
    if len(joiner.join(s.text for s in present)) <= budget:
        return [s.text for s in present]
    overhead = len(joiner) * max(len(present) - 1, 0)
    fixed = sum(len(s.text) for s in present if s.share is None)
    left = max(budget - overhead - fixed, 0)
    allotted: dict[int, str] = {}
    cuttable = sorted(
        ((i, s) for i, s in enumerate(present) if s.share is not None),
        key=lambda item: item[1].order,
    )
    for position, (index, section) in enumerate(cuttable):
        assert section.share is not None
        later = sum(len(s.text) for _, s in cuttable[position + 1 :])
        # Its share of what is left, or all that the later sections leave unused.
        cap = max(int(left * section.share), left - later)
        text = section.text if len(section.text) <= cap else _cut_or_drop(section, cap)
        allotted[index] = text
        left -= len(text)
    texts = [s.text if s.share is None else allotted[i] for i, s in enumerate(present)]
    texts = [t for t in texts if t]
    joined = joiner.join(texts)
    if len(joined) > budget:  # fixed sections alone over the budget
        marker = "\n[... cut at the observation budget]"
        return [joined[: max(budget - len(marker), 0)] + marker[:budget]]
    return texts


def _cut_or_drop(section: Section, cap: int) -> str:
    if cap < 120:
        return ""
    return cut_text(section.text, cap, section.what, section.how)
