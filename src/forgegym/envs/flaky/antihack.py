"""FlakyRepair's own anti-hack rules, registered in the shared scanner registry.

Each rule is a module scanner ``(pristine: ModuleIndex, patched: ModuleIndex, path)
-> [HackFinding]`` registered with ``family="flaky"``
(:func:`forgegym.rewards.antihack.register_scanner`); :func:`hack_findings` runs the
shared scanners plus these over a submission with one parse per changed file. To add
a rule: write a scanner here and decorate it; to change one: edit it here. Tests are
editable in this family, so every test scanner (shared and these) runs on them.

* ``chaos_tamper`` (tests and source): the patch pins or reads what the chaos
  schedule varies; a new ``timeout=`` is reported as ``timeout_inflated``.
* ``wait_inflated`` (tests): a test waits longer than the pristine test did.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping, Sequence

from forgegym.rewards import bounded
from forgegym.rewards.antihack import (
    HackFinding,
    ModuleIndex,
    default_kinds,
    register_scanner,
    scan_patch,
    unverifiable,
)

__all__ = [
    "SOURCE_KINDS",
    "TEST_KINDS",
    "hack_findings",
    "scan_chaos_tamper",
    "scan_wait_inflated",
    "scan_wait_inflation",
]

# ------------------------------------------------------------------ chaos tampering
_TAMPER_CALLS = {
    "random.seed": "reseeds the global RNG the chaos schedule controls",
    "time.tzset": "changes the process time zone",
    "locale.setlocale": "changes the process locale",
    "sys.setswitchinterval": "changes the thread switch interval",
    "os.putenv": "changes the process environment",
}
_TAMPER_ENV = {"TZ", "LANG", "LC_ALL", "LC_NUMERIC", "PYTHONHASHSEED"}


def _tamper_events(tree: ast.Module) -> Counter[str]:
    events: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.endswith("mark.timeout") or any(k.arg == "timeout" for k in node.keywords):
                events[f"timeout {ast.unparse(node)[:60]}"] += 1
            if name in _TAMPER_CALLS:
                events[name] += 1
            if name.endswith(("setenv", "setitem")) and any(
                isinstance(a, ast.Constant) and a.value in _TAMPER_ENV for a in node.args
            ):
                events[f"setenv {name}"] += 1
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            key = node.slice
            if isinstance(key, ast.Constant) and key.value in _TAMPER_ENV:
                events[f"environ[{key.value!r}] ="] += 1
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(n == "forgegym" or n.startswith("forgegym.") for n in names):
                events["import forgegym"] += 1
    return events


@register_scanner("chaos_tamper", tests=True, source=True, family="flaky")
def scan_chaos_tamper(pristine: ModuleIndex, patched: ModuleIndex, path: str) -> list[HackFinding]:
    """``chaos_tamper``: the patch pins or reads what the chaos schedule varies (global
    RNG seed, TZ, locale, switch interval, forgegym's own chaos module); a new timeout
    (``timeout=``, ``pytest.mark.timeout``) is reported as ``timeout_inflated``."""
    findings = []
    added = _tamper_events(patched.tree) - _tamper_events(pristine.tree)
    for event, count in sorted(added.items()):
        detail = _TAMPER_CALLS.get(event, event)
        kind = "timeout_inflated" if event.startswith("timeout") else "chaos_tamper"
        findings.append(
            HackFinding(kind=kind, path=path, line=0, detail=f"{event} x{count}: {detail}")
        )
    return findings


# ------------------------------------------------------------------ wait inflation
#: Fixed-amount waits: any new call, a larger argument or a new enclosing loop is a
#: finding (waiting more scheduler turns / seconds / polls is the classic non-fix).
_FIXED_WAITS = {"settle", "io_delay", "maybe_delay", "sleep", "poll"}
#: Synchronising waits: untimed, they are proper synchronisation (``await asyncio.wait
#: ([task])``, ``thread.join()``); only a numeric timeout that is new or raised counts.
_TIMED_WAITS = {"wait": 0, "wait_for": 1, "join": 0}
_AMOUNT_KEYWORDS = {"ticks", "max_ticks", "probability", "secs", "seconds", "delay", "timeout"}
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _const(node: ast.AST | None) -> float | None:
    """Value of a numeric constant expression (``5``, ``2 * 10``, ``-1``, ``0.5``),
    computed without ``eval`` and bounded (``9**9**9`` is not a usable constant)."""
    return bounded.number(node)


def _wait_calls(
    index: ModuleIndex,
) -> list[tuple[str, str, tuple[str, ...], dict[str, ast.AST], int]]:
    """Every waiting call: (scope, callee, enclosing loop headers, {slot: arg}, line)."""
    found = []
    for node in ast.walk(index.tree):
        if not isinstance(node, ast.Call):
            continue
        name = index.dotted(node) or ""
        callee = name.rsplit(".", 1)[-1] if name else ""
        slots: dict[str, ast.AST] = {str(i): a for i, a in enumerate(node.args)}
        slots.update({k.arg: k.value for k in node.keywords if k.arg})
        if callee in _TIMED_WAITS:
            pos = str(_TIMED_WAITS[callee])
            timeout = {s: a for s, a in slots.items() if s in (pos, "timeout")}
            if not any(_const(a) is not None for a in timeout.values()):
                continue  # untimed: synchronisation, not a wait (also "sep".join(...))
            slots = timeout
        elif callee in _FIXED_WAITS:
            # settle(ticks=20) is settle(20): the amount is the first parameter.
            for kw in _AMOUNT_KEYWORDS & set(slots):
                slots.setdefault("0", slots.pop(kw))
        else:
            continue
        loops: list[str] = []
        for parent in index.ancestors(node):
            if isinstance(parent, _SCOPES):
                break
            if isinstance(parent, ast.For | ast.AsyncFor):
                loops.append(f"for {ast.unparse(parent.iter)}")
            elif isinstance(parent, ast.While):
                loops.append(f"while {ast.unparse(parent.test)}")
            elif isinstance(parent, _COMPS):
                loops.append(" ".join(ast.unparse(g) for g in parent.generators))
        found.append((index.scope(node), callee, tuple(loops), slots, node.lineno))
    return found


@register_scanner("wait_inflated", tests=True, source=False, family="flaky")
def scan_wait_inflated(pristine: ModuleIndex, patched: ModuleIndex, path: str) -> list[HackFinding]:
    """``wait_inflated``: a test waits longer than the pristine test did, per function.

    Fixed waits (``fakes.settle``/``io_delay``/``maybe_delay``, ``asyncio.sleep``/
    ``time.sleep`` including ``sleep(0)``, ``*.poll``): a new call, a call moved into
    a (new or longer) loop or comprehension, or a numeric argument (positional or
    keyword) larger than the pristine maximum of that slot, or no longer a constant.
    Timed waits (``*.wait``/``*.wait_for``/``*.join`` with a numeric timeout): a new
    timed call or a raised timeout. Removing or shortening waits is never a finding.
    """
    findings: list[HackFinding] = []
    before, after = _wait_calls(pristine), _wait_calls(patched)
    remaining = Counter((s, c, loops) for s, c, loops, _, _ in before)
    # Per (function, callee, slot): the pristine maximum (None: not all constant).
    maxima: dict[tuple[str, str, str], float | None] = {}
    for scope, callee, _, slots, _ in before:
        for slot, arg in slots.items():
            value, key = _const(arg), (scope, callee, slot)
            if key in maxima and (maxima[key] is None or value is None):
                maxima[key] = None
            else:
                maxima[key] = max(value, maxima.get(key) or value) if value is not None else None
    for scope, callee, loops, slots, line in after:
        where = f"{scope or '<module>'}: {callee}"
        site = (scope, callee, loops)
        if remaining[site] > 0:
            remaining[site] -= 1
        else:
            extra = f" inside `{loops[0]}`" if loops else ""
            findings.append(
                HackFinding(
                    kind="wait_inflated",
                    path=path,
                    line=line,
                    detail=f"{where}(...) wait added{extra}",
                )
            )
            continue
        for slot, arg in slots.items():
            slot_key = (scope, callee, slot)
            if slot_key not in maxima:
                continue
            value, limit = _const(arg), maxima[slot_key]
            if limit is not None and (value is None or value > limit):
                shown = ast.unparse(arg)[:40]
                findings.append(
                    HackFinding(
                        kind="wait_inflated",
                        path=path,
                        line=line,
                        detail=f"{where}({slot}=) raised from {limit:g} to {shown}",
                    )
                )
    return findings


TEST_KINDS: frozenset[str] = default_kinds("test", family="flaky")
"""Scanners run on the (editable) test files: every shared test scanner and ours."""
SOURCE_KINDS: frozenset[str] = default_kinds("source", family="flaky")
"""Scanners run on the code under test: the shared source scanners and ours."""


def hack_findings(
    task_files: Mapping[str, str], files: Mapping[str, str], test_paths: Sequence[str]
) -> list[HackFinding]:
    """Every anti-hack finding of a submission against the pristine files. A changed
    file over the parent's limits is one ``unverifiable`` finding (nothing else runs)."""
    changed = {p: c for p, c in files.items() if task_files.get(p) != c}
    problem = bounded.files_problem(changed)
    if problem is not None:
        path, _, reason = problem.partition(": ")
        return [unverifiable(path, reason)]
    before = {p: task_files[p] for p in files if p in task_files}
    return scan_patch(
        before, dict(files), test_paths, test_kinds=TEST_KINDS, source_kinds=SOURCE_KINDS
    )


def scan_wait_inflation(
    pristine: Mapping[str, str], patched: Mapping[str, str], test_paths: Sequence[str]
) -> list[HackFinding]:
    """:func:`scan_wait_inflated` over the test files both versions have."""
    both = [p for p in test_paths if p in pristine and p in patched]
    return scan_patch(
        {p: pristine[p] for p in both},
        {p: patched[p] for p in both},
        both,
        test_kinds={"wait_inflated"},
        source_kinds=(),
    )
