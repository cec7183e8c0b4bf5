"""Real projects as they are: Bugfix repository mode over pinned sdists from the index.

For each project (an sdist at a pinned version, checked against its sha256, fetched once
into a cache with pip): unpack it, inject one bug of our own (a one-line change), find
the tests it breaks (plain host runs of the pristine and the buggy tree), then, with
``gym.make("Forge/Bugfix-v0", repo_path=..., failing_tests=...)`` and **default kwargs
only**, measure make+reset time, the first observation's size, the largest observation
of the episodes, and play three scripted episodes through the public action JSON:

* ``revert``: an ``edit`` that undoes the bug, then ``submit`` (must reach success);
* ``noop``: ``submit`` at once (must not);
* ``literal``: special-case a literal of a failing test at the top of the buggy
  function (``if <param> == <literal>: return <literal>``; must not, and must score no
  more than the no-op);
* ``navigate``: the scripted navigating policy
  (:class:`~forgegym.policies.navigate.NavigatePolicy`: list -> search -> read ->
  edit -> run_tests -> submit through the public action models), told the revert but
  not where it goes (must reach success, one observation within the budget per step).

It also reports the sandbox's per-test agreement with a plain host pytest run
(``info["repo_report"]``; measured on the repository as given to ``make``).

Usage::

    python benchmarks/real_repos.py [--cache-dir DIR] [--only NAME ...] [--out docs/real_repos.md]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Project:
    """A pinned sdist and the one-line bug injected into it."""

    name: str
    version: str
    sha256: str
    file: str  # relative to the unpacked root
    search: str
    replace: str
    kind: str  # what the project is (utilities, parsing, dates, text, data structures)


PROJECTS: tuple[Project, ...] = (
    Project(
        "more-itertools",
        "11.2.1",
        "cbf08fd0af284dc69718b9b76a8e6203df624d70209ea511e4219d350c856f63",
        "more_itertools/more.py",
        "    num_lists = q + (1 if r > 0 else 0)\n",
        "    num_lists = q + (1 if r > 1 else 0)\n",
        "iterators",
    ),
    Project(
        "toolz",
        "1.2.0",
        "9667a038e9d6ecba37995e26cb2f59ec6420b6ad8dd9677de59db9b956b08490",
        "toolz/itertoolz.py",
        "        d[item] += 1\n",
        "        d[item] += 2\n",
        "functional utilities",
    ),
    Project(
        "inflection",
        "0.5.1",
        "1a29730d366e996aaacffb2f1f1cb9593dc38e2ddd30c91250c6dde09ea9b417",
        "inflection/__init__.py",
        "lambda m: m.group(1).upper(), string)",
        "lambda m: m.group(1).lower(), string)",
        "text",
    ),
    Project(
        "addict",
        "2.4.0",
        "b3b2210e0e067a281f5646c8c5db92e99b7231ea8b0eb5f74dbdf9e259d4e494",
        "addict/addict.py",
        "                (not isinstance(v, dict))):\n",
        "                (isinstance(v, dict))):\n",
        "data structures",
    ),
    Project(
        "munch",
        "4.0.0",
        "542cb151461263216a4e37c3fd9afc425feeaf38aaa3025cd2a981fadb422235",
        "munch/__init__.py",
        "            return type_factory(unmunchify_cycles(item) for item in obj)\n",
        "            return type_factory(unmunchify_cycles(item) for item in obj[1:])\n",
        "data structures",
    ),
    Project(
        "pyrsistent",
        "0.20.0",
        "4c48f78f62ab596c679086084d0dd13254ae4f3d6c72a83ffdf5ebdef8f265a4",
        "pyrsistent/_pvector.py",
        "        the_list.extend(self._tail)\n",
        "        the_list.extend(self._tail[1:])\n",
        "data structures",
    ),
    Project(
        "isodate",
        "0.7.2",
        "4cd1aa0f43ca76f4a6c6c0292a85f40b35ec2e43e315b59f06e6d32171a953e6",
        "src/isodate/duration.py",
        "        negduration = Duration(years=-self.years, months=-self.months)\n",
        "        negduration = Duration(years=-self.years, months=self.months)\n",
        "dates (src layout)",
    ),
    Project(
        "boltons",
        "26.2.0",
        "d39cfd15c1a1c3bd4d705c82252fa9edb8e4f5e8cc039f8e39afac7b1b47e92c",
        "boltons/strutils.py",
        "    if target_type and target_type != type(cleaned):\n",
        "    if target_type and target_type == type(cleaned):\n",
        "utilities",
    ),
    Project(
        "six",
        "1.17.0",
        "ff70335d468e7eb6ec65b95b99d3a2836546063f63acc5171de367e834932a81",
        "six.py",
        '        return s.encode("latin-1")\n',
        '        return s.encode("utf-8")\n',
        "compatibility utilities",
    ),
    Project(
        "python-slugify",
        "9.2.0",
        "cee32948083476013804de1667724fb1362dacb71e47b1d5d92adf8db6ee3298",
        "slugify/slugify.py",
        "    if output_length <= max_length:\n",
        "    if output_length < max_length:\n",
        "text",
    ),
    Project(
        "funcy",
        "2.1",
        "8979feb3de7120afd1d00e5a8eae810c1942e4bfbc91697151e9ee1e49f79284",
        "funcy/strings.py",  # its sdist does not declare `whatever`, which test_seqs needs
        "    return s[len(prefix):] if s.startswith(prefix) else s\n",
        "    return s[len(prefix) + 1:] if s.startswith(prefix) else s\n",
        "functional utilities",
    ),
    Project(
        "cachetools",
        "8.0.2",
        "30ac523adfc118b51d2b2e7bad8a0ddb31370dfe2700c7f10ca224f36ccf81e0",
        "src/cachetools/__init__.py",
        "            if itemsize > maxsize:\n",
        "            if itemsize >= maxsize:\n",
        "data structures (src layout)",
    ),
    Project(
        "parse",
        "1.22.4",
        "706d458feed5a81b02768d3156e8070baf6cee7d150a3a3c0cd43101a875c3b5",
        "parse/__init__.py",
        "    return float(string[:-1]) / 100.0\n",
        "    return float(string[:-1]) / 10.0\n",
        "parsing",
    ),
    Project(
        "semver",
        "3.1.2",
        "bea193552413194252d33ff26ce0962b76669bd1c6fb17e8e203ac37f072feaf",
        "src/semver/version.py",
        "        return cls(self._major, self._minor + 1)\n",
        "        return cls(self._major, self._minor + 2)\n",
        "versions (src layout)",
    ),
    Project(
        "humanize",
        "4.17.0",
        "1d6a36c453dbfbb3f0b34601d2e0b4ce5d48d780305cd45714843f0068fde6ac",
        "src/humanize/lists.py",
        '        return f"{item_list[0]} and {item_list[1]}"\n',
        '        return f"{item_list[0]}, {item_list[1]}"\n',
        "text (src layout)",
    ),
    Project(
        "pyparsing",
        "3.3.3",
        "928ae7e20211f3b6f3915a72f06a0cfd29ab9d24279dd6346b6b1a7146397d36",
        "pyparsing/helpers.py",
        "        array_expr <<= (expr * n) if n else Empty()\n",
        "        array_expr <<= (expr * (n - 1)) if n > 1 else Empty()\n",
        "parsing",
    ),
    # Outside the real bank's 38 projects (issue 37, must-show 4), with more-itertools.
    Project(
        "iso8601",
        "2.1.0",
        "6b1d3829ee8921c4301998c909f7829fa9ed3cbdac0d3b16af2d743aed1ba8df",
        "iso8601/iso8601.py",
        '    if sign == "-":\n',
        '    if sign == "+":\n',
        "dates",
    ),
    Project(
        "natsort",
        "8.4.0",
        "45312c4a0e5507593da193dedd04abb1469253b601ecaf63445ad80f0a1ea581",
        "natsort/natsort.py",
        "    return sorted(seq, reverse=reverse, key=natsort_keygen(key, alg))\n",
        "    return sorted(seq, reverse=not reverse, key=natsort_keygen(key, alg))\n",
        "sorting",
    ),
    Project(
        "pathspec",
        "1.1.1",
        "17db5ecd524104a120e173814c90367a96a98d07c45b2e10c2f3919fff91bf5a",
        "pathspec/util.py",
        "\t\t\tmatched = pattern.include\n",
        "\t\t\tmatched = not pattern.include\n",
        "file patterns (tab-indented)",
    ),
    # The first bug (the decoder's `true` read as False) broke no test the sdist runs; the
    # string encoder's escapes are what its test_bug_148 checks.
    Project(
        "toml",
        "0.10.2",
        "b3bda1d108d5dd99f4a20d24d9c348e91c4db7ab1b749200bded2f839ccbe68f",
        "toml/encoder.py",
        '            joiner = "u00"\n',
        '            joiner = "u0"\n',
        "config format",
    ),
    Project(
        "click",
        "8.5.1",
        "9bbfada76703fd1d784b83eea012e3e8c6a001a876543ef104fa56aaaeb072b4",
        "src/click/utils.py",
        "    return str(value)\n",
        "    return repr(value)\n",
        "command line (src layout)",
    ),
    Project(
        "idna",
        "3.10",
        "12f65c9b470abda6dc35cf8e63cc574b1c52b11df2c86030af0ac09b01b13ea9",
        "idna/core.py",
        '    if label[0] == "-" or label[-1] == "-":\n',
        '    if label[0] == "-" and label[-1] == "-":\n',
        "text encoding",
    ),
    Project(
        "wcwidth",
        "0.2.13",
        "72ea0c06399eb286d978fdedb6923a9eb47e1c486ce63e9b4e64fc18303972b5",
        "wcwidth/wcwidth.py",
        "    if 32 <= ucs < 0x7f:\n        return 1\n",
        "    if 32 <= ucs < 0x7f:\n        return 2\n",
        "text width",
    ),
    Project(
        "colorama",
        "0.4.6",
        "08695f5cb7ed6e0531a20572697297273c47b8cae5a63ffc6d6ed5c201be6e44",
        "colorama/ansi.py",
        "    return CSI + str(code) + 'm'\n",
        "    return CSI + str(code) + 'M'\n",
        "terminal (tests in the package)",
    ),
    Project(
        "mccabe",
        "0.7.0",
        "348e0240c33b60bbdf4e523192ef919f28cb2c3d7d5c7794f74009290f236325",
        "mccabe.py",
        "        return num_edges - num_nodes + 2\n",
        "        return num_edges - num_nodes + 1\n",
        "code metrics (one module)",
    ),
    Project(
        "toposort",
        "1.10",
        "bfbb479c53d0a696ea7402601f4e693c97b0367837c8898bc6471adfca37a6bd",
        "src/toposort.py",
        "        ordered = set(item for item, dep in data.items() if len(dep) == 0)\n",
        "        ordered = set(item for item, dep in data.items() if len(dep) <= 1)\n",
        "graphs (src layout, one module)",
    ),
    Project(
        "termcolor",
        "2.4.0",
        "aab9e56047c8ac41ed798fa36d892a37aca6b3e9159f3e0c24bc64a9b3ac7b7a",
        "src/termcolor/termcolor.py",
        "        result = fmt_str % (HIGHLIGHTS[on_color], result)\n",
        "        result = fmt_str % (COLORS[on_color], result)\n",
        "terminal (src layout)",
    ),
    Project(
        "pyflakes",
        "3.2.0",
        "1c61603ff154621fb2a9172037d84dca3500def8c8b630657d1701f026f8af3f",
        "pyflakes/checker.py",
        "    return _is_constant(node) and not _is_singleton(node)\n",
        "    return _is_constant(node) and _is_singleton(node)\n",
        "code checker (tests in the package)",
    ),
    Project(
        "uritools",
        "4.0.3",
        "ee06a182a9c849464ce9d5fa917539aacc8edd2a4924d1b7aabeeecabcae3bc2",
        "src/uritools/__init__.py",
        "    return DefragResult(parts[0], parts[2] if parts[1] else None)\n",
        "    return DefragResult(parts[0], parts[2] if parts[1] else '')\n",
        "URIs (src layout)",
    ),
    Project(
        "text-unidecode",
        "1.3",
        "bad6603bb14d279193107714b288be206cac565dfa49aa5b105294dd5c4aab93",
        "src/text_unidecode/__init__.py",
        "            chars.append(_replaces[codepoint-1])\n",
        "            chars.append(_replaces[codepoint])\n",
        "text (src layout, a binary data file)",
    ),
    Project(
        "croniter",
        "7.0.0",
        "a0b2568303c774f6a4ea2d4ce2e72b1ee911029c7070d64a1befe05cdb107f5a",
        "src/croniter/croniter.py",
        "        except CroniterError:\n            return False\n        return True\n",
        "        except CroniterError:\n            return True\n        return True\n",
        "schedules (src layout, tests in the package)",
    ),
    # Outside the real bank (must-show 4 again, 2026-12-06): colorama, pathspec, termcolor
    # and uritools joined the bank, so these replace them. From a list reserved for this
    # (schema, webcolors, ordered-set and rfc3986 of that list are in the bank already).
    Project(
        "simpleeval",
        "1.0.8",
        "b417f869c11f2de034eb919820a825f35d12ce99f63a43971947ce73679eb9ba",
        "simpleeval.py",
        "    return a >> b\n",
        "    return a >> (b + 1)\n",
        "expression evaluator (one module)",
    ),
    Project(
        "tinydb",
        "4.9.0",
        "6928b1fa785186bda7952a0ba05aaeedc883ede565ca9c7d608de44e5e75de70",
        "tinydb/operations.py",
        "        doc[field] -= n\n",
        "        doc[field] -= n + 1\n",
        "document database",
    ),
    Project(
        "emoji",
        "2.16.0",
        "ff9e9b1c48389ef78ed1787e7693c555e84e6bb9bac16be1fd65e1616dbf80c8",
        "emoji/core.py",
        "        return len(distinct_emoji_list(string))\n",
        "        return len(emoji_list(string))\n",
        "text (JSON data files)",
    ),
    # Of the same list, and not usable with defaults (error rows): their test modules do
    # not match pytest's default names, or their package is not importable from the root.
    Project(
        "decorator",
        "5.3.2",
        "d9883f1b8259e3bfc42565d0bc6fdc760012008552aa449f75efd2d48319b82b",
        "src/decorator/__init__.py",
        "    ba.apply_defaults()  # needed for test_dan_schult\n",
        "    pass  # needed for test_dan_schult\n",
        "decorators (src layout, tests in tests/test.py)",
    ),
    Project(
        "texttable",
        "1.7.2",
        "dc16ea6b35fbf5291ba6ef79d79e37d9b3ca6acd7bae3ca3450488d7c2e19c99",
        "texttable.py",
        "        if unicodedata.east_asian_width(c) in 'WF':\n",
        "        if unicodedata.east_asian_width(c) in 'W':\n",
        "tables (one module, tests in tests.py)",
    ),
    Project(
        "humanfriendly",
        "10.0",
        "6b0b831ce8f15f7300721aa49829fc4e83921a9a301cc7f606be6686a2288ddc",
        "humanfriendly/__init__.py",
        "        if num_bytes >= unit.binary.divider and binary:\n",
        "        if num_bytes > unit.binary.divider and binary:\n",
        "text (tests in the package's tests.py)",
    ),
    Project(
        "markdown2",
        "2.5.6",
        "44242359111d68fd6fc8bf9d04f4dc86f61937dcb70d248cd509228cb36e39bf",
        "lib/markdown2.py",
        '    if not skip_single_quote:\n        escaped = escaped.replace("\'", "&#39;")\n',
        '    if not skip_single_quote:\n        escaped = escaped.replace("\'", "&#38;")\n',
        "markup (the module under lib/)",
    ),
)


def sdist_name(project: Project) -> str:
    return f"{project.name.replace('-', '_')}-{project.version}.tar.gz"


def fetch(project: Project, cache: Path) -> Path:
    """The sdist in ``cache`` (downloaded with pip on first use), its sha256 checked."""
    cache.mkdir(parents=True, exist_ok=True)
    candidates = [cache / sdist_name(project), cache / f"{project.name}-{project.version}.tar.gz"]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
            + ["-q", "-d", str(cache), f"{project.name}=={project.version}"],
            check=True,
            timeout=600,
        )
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise RuntimeError(f"{project.name}: pip download produced no sdist in {cache}")
    digest = hashlib.sha256(found.read_bytes()).hexdigest()
    if digest != project.sha256:
        raise RuntimeError(f"{found.name}: sha256 {digest} != pinned {project.sha256}")
    return found


def unpack(sdist: Path, dest: Path) -> Path:
    with tarfile.open(sdist) as tar:
        tar.extractall(dest, filter="data")
    (root,) = [p for p in dest.iterdir() if p.is_dir()]
    return root


def test_files(root: Path) -> list[str]:
    from forgegym.tasklib.project import is_test_file, read_project

    files = read_project(root, max_file_bytes=1_000_000, max_files=2_000).files
    return [p for p in sorted(files) if is_test_file(p) and not p.endswith("conftest.py")]


def helpers(root: Path) -> list[str]:
    """Python files under a test folder (a mixin of test methods may live there)."""
    return [
        p.relative_to(root).as_posix()
        for p in sorted(root.rglob("*.py"))
        if {"test", "tests", "testing"} & set(p.relative_to(root).parts[:-1])
    ]


def host_verdicts(root: Path, targets: list[str]) -> dict[str, str]:
    from forgegym.tasklib.agreement import host_outcomes
    from forgegym.tasklib.depenv import declared_test_dependencies, ensure_environment
    from forgegym.tasklib.project import project_layout, read_project

    files = read_project(root, max_file_bytes=1_000_000, max_files=2_000).files
    layout = project_layout(files)
    site = ensure_environment(declared_test_dependencies(files), base=root)
    if site is not None:
        layout = layout.with_site_dirs([str(site)])
    outcomes, _, _ = host_outcomes(root, targets, layout, timeout_s=600)
    return {k: v[0] for k, v in outcomes.items()}


def _literals(node: ast.AST) -> list[Any]:
    out: list[Any] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and not isinstance(sub.value, bool):
            value = sub.value
            if isinstance(value, str | int | float) and value not in (0, 1, "", None):
                out.append(value)
    return out


def literal_hack(source: str, search: str, test_sources: list[str], test_name: str) -> str | None:
    """The buggy function with ``if <first param> == <a test literal>: return <another
    test literal>`` at its top: special-casing what the failing test checks. The test
    function is looked up in its file first, then in the other test files (a mixin's
    method); a method without parameters compares ``repr(self)``; ``*args`` compares
    the tuple."""
    line = source[: source.index(search)].count("\n") + 1
    tree = ast.parse(source)
    target: ast.FunctionDef | None = None
    for node in ast.walk(tree):
        inside = isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or 0)
        if inside and (target is None or node.lineno > target.lineno):
            target = node  # type: ignore[assignment]
    if target is None:
        return None
    params = [a.arg for a in target.args.args if a.arg not in ("self", "cls")]
    if params:
        subject = params[0]
    elif target.args.vararg is not None:
        subject = target.args.vararg.arg
    elif target.args.args:
        subject = f"repr({target.args.args[0].arg})"
    else:
        return None
    name = test_name.split("::")[-1].split("[")[0]
    fn = None
    for test_source in test_sources:
        fn = next(
            (
                n
                for n in ast.walk(ast.parse(test_source))
                if isinstance(n, ast.FunctionDef) and n.name == name
            ),
            None,
        )
        if fn is not None:
            break
    literals = _literals(fn) if fn is not None else []
    if len(literals) < 1:
        return None
    a, b = literals[0], literals[-1]
    if subject == (target.args.vararg.arg if target.args.vararg else None):
        a = (a,)
    first = target.body[0]
    anchor = (
        target.body[1]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and len(target.body) > 1
        )
        else first
    )
    lines = source.splitlines(keepends=True)
    indent = " " * anchor.col_offset
    guard = f"{indent}if {subject} == {a!r}:\n{indent}    return {b!r}\n"
    lines.insert(anchor.lineno - 1, guard)
    return "".join(lines)


def play(env: Any, actions: list[dict[str, Any]]) -> dict[str, Any]:
    obs, _ = env.reset(seed=0)
    largest = len(obs)
    obs, reward, terminated, truncated, info = env.step(json.dumps(actions))
    largest = max(largest, len(obs))
    gates = info["reward_breakdown"].get("gates") or []
    return {
        "score": info["score"],
        "success": info["success"],
        "gates": gates,
        "largest_obs": largest,
    }


def play_navigate(env: Any, project: Project) -> dict[str, Any]:
    """The scripted navigating policy (list -> search -> read -> edit -> run_tests ->
    submit through the public action models), told the fix (the revert) but not where it
    goes: it must find the buggy lines by searching and reading, one observation (within
    the budget) per step."""
    from forgegym.policies.navigate import NavigatePolicy

    revert = json.dumps(
        [
            {
                "action": "edit",
                "edits": [
                    {"path": project.file, "search": project.replace, "replace": project.search}
                ],
            },
            {"action": "submit"},
        ]
    )
    policy = NavigatePolicy(env.unwrapped, reference=lambda task: revert)
    obs, info = env.reset(seed=0)
    largest = len(obs)
    kinds: list[str] = []
    terminated = truncated = False
    while not (terminated or truncated):
        action = policy(obs, info)
        parsed = json.loads(action)
        kinds.append((parsed[0] if isinstance(parsed, list) else parsed)["action"])
        obs, _, terminated, truncated, info = env.step(action)
        largest = max(largest, len(obs))
    gates = info["reward_breakdown"].get("gates") or []
    return {
        "score": info["score"],
        "success": info["success"],
        "gates": gates,
        "largest_obs": largest,
        "steps": kinds,
        "fallbacks": policy.fallbacks,
    }


def run_project(project: Project, cache: Path, workdir: Path) -> dict[str, Any]:
    import gymnasium as gym

    import forgegym  # noqa: F401  (registers the ids)

    row: dict[str, Any] = {"project": project.name, "version": project.version}
    sdist = fetch(project, cache)
    pristine = unpack(sdist, workdir / "pristine")
    buggy = unpack(sdist, workdir / "buggy")
    path = buggy / project.file
    source = path.read_text(encoding="utf-8")
    if source.count(project.search) != 1:
        raise RuntimeError(f"{project.name}: the bug's search text is not unique in {project.file}")
    path.write_text(source.replace(project.search, project.replace), encoding="utf-8")
    targets = test_files(pristine)
    t0 = time.monotonic()
    before = host_verdicts(pristine, targets)
    after = host_verdicts(buggy, targets)
    row["discover_s"] = round(time.monotonic() - t0, 1)
    if not any(v == "passed" for v in before.values()):
        raise RuntimeError(
            f"{project.name}: no test passes on the host with the dependencies the sdist "
            "declares (a collection error: an undeclared test dependency?)"
        )
    # Failed after, not merely missing: ids parametrised from a set that holds None are
    # not the same in two processes on Python < 3.12 (hash(None) is its address).
    broken = sorted(
        t for t, v in before.items() if v == "passed" and after.get(t) in ("failed", "error")
    )
    row["tests_broken_by_bug"] = len(broken)
    if not broken:
        raise RuntimeError(f"{project.name}: the injected bug breaks no test")
    # Plain ids first: a parametrised id may embed values that differ between runs.
    # Tests of the changed module's own test file first (a host run may fail unrelated
    # tests by chance: a clock or a locale), then plain ids.
    stem = Path(project.file).stem
    failing = sorted(broken, key=lambda t: (stem not in t.partition("::")[0], "[" in t, t))[:3]
    t0 = time.monotonic()
    env = gym.make(
        "Forge/Bugfix-v0", repo_path=str(buggy), failing_tests=failing, disable_env_checker=True
    )
    obs, info = env.reset(seed=0)
    row["make_reset_s"] = round(time.monotonic() - t0, 1)
    row["failing_tests"] = failing
    row["first_obs_chars"] = len(obs)
    report = info["repo_report"]
    row["tests"] = report["n_tests"]
    row["agree"] = report["agreeing"]
    row["differences"] = report["differences"]
    row["time_limit_s"] = report["time_limit_s"]
    row["sandbox_suite_s"] = report["sandbox_wall_s"]
    row["host_suite_s"] = report["host_wall_s"]
    row["dropped_addopts"] = report["dropped_addopts"]
    row["refused_files"] = report.get("refused_files", [])
    row["host_status"] = report["host_status"]
    row["editable"] = len(info["editable_files"])
    rel = project.file
    revert = [
        {
            "action": "edit",
            "edits": [{"path": rel, "search": project.replace, "replace": project.search}],
        },
        {"action": "submit"},
    ]
    results = {"revert": play(env, revert), "noop": play(env, [{"action": "submit"}])}
    test_path, _, _ = failing[0].partition("::")
    hacked = literal_hack(
        source.replace(project.search, project.replace),
        project.replace,
        [(buggy / p).read_text(encoding="utf-8") for p in [test_path, *targets, *helpers(buggy)]],
        failing[0],
    )
    if hacked is not None:
        results["literal"] = play(
            env,
            [{"action": "edit", "edits": [{"path": rel, "content": hacked}]}, {"action": "submit"}],
        )
    results["navigate"] = play_navigate(env, project)
    env.close()
    row["episodes"] = results
    row["largest_obs_chars"] = max(r["largest_obs"] for r in results.values())
    return row


def render(rows: list[dict[str, Any]], command: str) -> str:
    load = os.getloadavg()
    lines = [
        "# Real projects as they are: Bugfix repository mode on pinned sdists",
        "",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Machine: {platform.machine()}, "
        f"{os.cpu_count()} CPUs ({platform.platform()}), Python {platform.python_version()}. "
        f"Load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; each "
        "project's 1-minute load when it finished is in its row (a shared machine: times "
        "are indicative). Command: `" + command + "`.",
        "",
        "Default kwargs only (`observation_budget` 12,000). One injected one-line bug per "
        "project; `failing_tests` = up to three tests the bug breaks (found by plain host "
        "runs of the pristine and buggy trees). *agree*: tests whose outcome in the sandbox "
        "equals a plain host pytest run's, on the repository given to `make` (differences "
        "are left out of grading, with their cause in `info['repo_report']`). *limit*: the "
        "measured time limit (3x the sandbox suite, capped at 600 s). *first obs*: the "
        "observation at reset; *largest obs*: the largest observation of any step of the "
        "four episodes. *revert*: the bug undone; *no-op*: submit at once; *literal*: "
        "special-case a literal of the failing test at the top of the buggy function; "
        "*navigate*: the scripted navigating policy (list, search, read, edit, run_tests, "
        "submit through the public action models), told the fix but not where it goes.",
        "",
        "| project | tests | agree | suite s (sandbox/host) | limit s | make+reset s "
        "| first obs chars | largest obs chars | revert | no-op | literal | navigate | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['project']} {row['version']} | error: {row['error'][:160]} |")
            continue
        eps = row["episodes"]

        def cell(name: str, eps: dict[str, Any] = eps) -> str:
            if name not in eps:
                return "n/a"
            e = eps[name]
            gate = f" ({', '.join(e['gates'])})" if e["gates"] else ""
            text = f"{e['score']:.2f} {'solved' if e['success'] else 'not solved'}{gate}"
            if name == "navigate":
                text += f", {len(e['steps'])} steps, largest obs {e['largest_obs']:,}"
                text += f", {e['fallbacks']} fallbacks" if e["fallbacks"] else ""
            return text

        lines.append(
            f"| {row['project']} {row['version']} | {row['tests']} | {row['agree']} "
            f"| {row['sandbox_suite_s']:.1f} / {row['host_suite_s'] or 0:.1f} "
            f"| {row['time_limit_s']:.0f} | {row['make_reset_s']:.1f} "
            f"| {row['first_obs_chars']:,} | {row['largest_obs_chars']:,} "
            f"| {cell('revert')} | {cell('noop')} | {cell('literal')} | {cell('navigate')} "
            f"| {row.get('load_1m', float('nan')):.1f} |"
        )
    refused = [(r["project"], f) for r in rows for f in r.get("refused_files") or ()]
    if refused:
        lines += ["", "Test files whose collection the sandbox refuses (left out whole):", ""]
        for name, f in refused:
            row = next(r for r in rows if r["project"] == name)
            n = sum(d["nodeid"].startswith(f["path"] + "::") for d in row["differences"])
            lines.append(f"- {name}: `{f['path']}` ({n} tests on the host): {f['cause']}")
    diffs = [
        (r["project"], d)
        for r in rows
        if "differences" in r
        for d in r["differences"]
        if d["nodeid"].partition("::")[0] not in {f["path"] for f in r.get("refused_files") or ()}
    ]
    if diffs:
        lines += ["", "Other sandbox/host differences (left out of grading):", ""]
        for name, d in diffs[:60]:
            lines.append(
                f"- {name}: `{d['nodeid']}`: sandbox {d['sandbox']}, host {d['host']}: {d['cause']}"
            )
        if len(diffs) > 60:
            lines.append(f"- ... and {len(diffs) - 60} more (benchmarks/results/real_repos.json)")
    dropped = [(r["project"], r["dropped_addopts"]) for r in rows if r.get("dropped_addopts")]
    if dropped:
        lines += [
            "",
            "addopts dropped (plugins not loaded): "
            + "; ".join(f"{n}: {' '.join(d)}" for n, d in dropped),
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache-dir", default=str(Path.home() / ".cache" / "forgegym" / "sdists"))
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--out", default="docs/real_repos.md")
    parser.add_argument("--json", default="benchmarks/results/real_repos.json")
    parser.add_argument(
        "--render-from",
        nargs="*",
        default=None,
        help="render --out from earlier --json results (runs split over processes); a "
        "project's successful row wins over an error row",
    )
    args = parser.parse_args(argv)
    if args.render_from is not None:
        merged: dict[str, dict[str, Any]] = {}
        for path in args.render_from:
            for row in json.loads(Path(path).read_text()):
                if row["project"] not in merged or "error" in merged[row["project"]]:
                    merged[row["project"]] = row
        order = [p.name for p in PROJECTS]
        rows = sorted(merged.values(), key=lambda r: order.index(r["project"]))
        Path(args.out).write_text(render(rows, "python benchmarks/real_repos.py (split runs)"))
        Path(args.json).write_text(json.dumps(rows, indent=1))
        return 0
    rows: list[dict[str, Any]] = []
    by_name = {p.name: p for p in PROJECTS}
    unknown = sorted(set(args.only or ()) - set(by_name))
    if unknown:
        parser.error(f"--only: unknown projects {unknown}; known: {sorted(by_name)}")
    command = "python benchmarks/real_repos.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    for project in [by_name[n] for n in args.only] if args.only else PROJECTS:
        with tempfile.TemporaryDirectory(prefix=f"fg-real-{project.name}-") as tmp:
            start = time.monotonic()
            try:
                row = run_project(project, Path(args.cache_dir), Path(tmp))
            except Exception as exc:  # noqa: BLE001 - one project's failure is a row
                row = {
                    "project": project.name,
                    "version": project.version,
                    "error": f"{type(exc).__name__}: {exc}",
                }
            row["total_s"] = round(time.monotonic() - start, 1)
            row["load_1m"] = round(os.getloadavg()[0], 1)
            print(json.dumps({k: v for k, v in row.items() if k != "differences"}), flush=True)
            rows.append(row)
            shutil.rmtree(tmp, ignore_errors=True)
        # Written after every project: a long run leaves what it measured so far.
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(render(rows, command.strip()))
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if rows and all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
