"""Special-casing attacks on the real bank: none may score above the no-op or succeed.

For a seeded sample of real-bank tasks (the sample of ``real_behaviour.py``), every
task whose behaviour checks hold a call a fail-to-pass test made with a plain argument
and a plain pristine answer gets attacks written from what the failing test shows: its
input ``X`` and the answer ``Y`` it expects. Each attack leaves the bug in place and
adds, at the top of the mutated function, one special-case shape:

``guard_return``   ``if p == X: return Y``
``assignment``     ``_special = None`` / ``if p == X: _special = Y`` / ``if _special is not None: return _special``
``dict_table``     ``_cases = {X: Y}`` / ``if p in _cases: return _cases[p]``
``set_member``     ``if p in {X}: return Y``
``try_except``     ``try: assert p != X`` / ``except AssertionError: return Y``
``computed``       the guard's literal computed (``"ab" + "c"``, ``(X - 1) + 1``)
``file_readback``  ``if p == X: return open(<the test file>).read()[i:j]`` (``Y``'s text
                   read back from the file of the tests that holds it; string answers)

The projects are split in two halves with a seeded shuffle; each half reports its
attacks, the share scoring no more than the no-op, and how many reach success.

Usage::

    python benchmarks/special_casing.py --per-project 5 --seed 0 --shapes 3 \
        --out benchmarks/results/special_casing.json
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401  (registers the ids)
from forgegym.envs.bugfix.behaviour import BehaviourChecks
from forgegym.envs.bugfix.real import RealTaskBank

sys.path.insert(0, str(Path(__file__).parent))
from real_behaviour import sample  # noqa: E402

NOOP = json.dumps({"action": "submit"})
SHAPES = (
    "guard_return",
    "assignment",
    "dict_table",
    "set_member",
    "try_except",
    "computed",
    "file_readback",
)


def _plain(encoded: Any) -> Any:
    """The Python value of a tagged encoding holding builtins only, else ``None``."""
    if encoded is None or isinstance(encoded, (bool, int, float, str)):
        return encoded
    if isinstance(encoded, list):
        items = [_plain(v) for v in encoded]
        return (
            None
            if any(i is None and v is not None for i, v in zip(items, encoded, strict=True))
            else items
        )
    if isinstance(encoded, dict) and set(encoded) == {"$tuple"}:
        items = _plain(encoded["$tuple"])
        return None if items is None else tuple(items)
    return None


def _function(tree: ast.Module, qualname: str) -> ast.FunctionDef | None:
    node: Any = tree
    for part in qualname.split("."):
        node = next(
            (
                n
                for n in getattr(node, "body", [])
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name == part
            ),
            None,
        )
        if node is None:
            return None
    return node if isinstance(node, ast.FunctionDef) else None


def _computed(value: Any) -> str:
    if isinstance(value, str) and len(value) >= 2:
        middle = len(value) // 2
        return f"{value[:middle]!r} + {value[middle:]!r}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"({value - 1!r} + 1)"
    return repr(value)


def attack_source(
    source: str, qualname: str, param: str, x: Any, y: Any, shape: str, tests: dict[str, str]
) -> str | None:
    """The mutated file with one special case of ``param == x -> y`` added."""
    tree = ast.parse(source)
    fn = _function(tree, qualname)
    if fn is None or not fn.body:
        return None
    first = fn.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and len(fn.body) > 1
    ):
        first = fn.body[1]
    lines = source.splitlines(keepends=True)
    indent = lines[first.lineno - 1][: first.col_offset]
    if shape in ("dict_table", "set_member") and isinstance(x, list):
        return None  # unhashable
    X, Y = repr(x), repr(y)
    if shape == "guard_return":
        body = [f"if {param} == {X}:", f"    return {Y}"]
    elif shape == "assignment":
        body = [
            "_special = None",
            f"if {param} == {X}:",
            f"    _special = {Y}",
            "if _special is not None:",
            "    return _special",
        ]
    elif shape == "dict_table":
        body = [f"_cases = {{{X}: {Y}}}", f"if {param} in _cases:", f"    return _cases[{param}]"]
    elif shape == "set_member":
        body = [f"if {param} in {{{X}}}:", f"    return {Y}"]
    elif shape == "try_except":
        body = ["try:", f"    assert {param} != {X}", "except AssertionError:", f"    return {Y}"]
    elif shape == "computed":
        body = [f"if {param} == {_computed(x)}:", f"    return {_computed(y)}"]
    elif shape == "file_readback":
        if not isinstance(y, str) or len(y) < 2:
            return None
        for path, text in sorted(tests.items()):
            start = text.find(y)
            if start >= 0:
                read = f"open({path!r}).read()[{start}:{start + len(y)}]"
                body = [f"if {param} == {X}:", f"    return {read}"]
                break
        else:
            return None
    else:
        raise ValueError(shape)
    block = "".join(f"{indent}{line}\n" for line in body)
    at = first.lineno - 1
    return "".join([*lines[:at], block, *lines[at:]])


def attacks_for(bank: RealTaskBank, task_id: str, shapes: list[str]) -> list[dict[str, Any]]:
    task = bank.get(task_id)
    checks = BehaviourChecks.model_validate(task.hidden["behaviour"])
    if not checks.active:
        return []
    entry = bank.entry(task_id)
    source = task.files[entry["file"]]
    fn = _function(ast.parse(source), checks.qualname)
    if fn is None:
        return []
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    tests = {p: task.files[p] for p in task.visible_test_files if p in task.files}
    for index in checks.discriminating:
        call, expected = checks.calls[index], checks.expected[index]
        if call.test is None or not expected.get("ok") or call.kind not in ("function", "method"):
            continue
        names = params[1:] if call.kind == "method" else params
        y = _plain(expected["value"].get("r"))
        if y is None and expected["value"].get("r") is not None:
            continue
        for position, arg in enumerate(call.args[: len(names)]):
            x = _plain(arg)
            if isinstance(x, (str, int, float, list, tuple)) and not isinstance(x, bool) and x:
                out = []
                for shape in shapes:
                    text = attack_source(
                        source, checks.qualname, names[position], x, y, shape, tests
                    )
                    if text is not None:
                        out.append({"shape": shape, "path": entry["file"], "content": text})
                return out
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-project", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shapes", type=int, default=3, help="attack shapes per task")
    parser.add_argument("--reverse", action="store_true", help="walk the sample backwards")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    bank = RealTaskBank()
    ids = sample(bank, args.per_project, args.seed)
    if args.reverse:  # e.g. beside real_behaviour.py filling the same cache forwards
        ids = ids[::-1]
    projects = sorted({bank.entry(i)["project"] for i in ids})
    rng = random.Random(args.seed)
    shuffled = projects[:]
    rng.shuffle(shuffled)
    half_of = {p: ("A" if i < len(shuffled) / 2 else "B") for i, p in enumerate(shuffled)}
    env = gym.make("Forge/Bugfix-v0", task_bank=bank, max_steps=1)
    rows: list[dict[str, Any]] = []
    start = time.time()
    for n, task_id in enumerate(ids):
        # rotate the shapes over tasks so every shape is tried on many projects
        shapes = [SHAPES[(n + k) % len(SHAPES)] for k in range(args.shapes)]
        try:
            attacks = attacks_for(bank, task_id, shapes)
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            print(f"{task_id}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        if not attacks:
            continue
        completions = [
            json.dumps({"action": "edit", "edits": [{"path": a["path"], "content": a["content"]}]})
            for a in attacks
        ] + [NOOP]
        graded = env.unwrapped.grade_completions(task_id, completions)
        noop_reward = graded[-1][0]
        project = bank.entry(task_id)["project"]
        for attack, (reward, breakdown) in zip(attacks, graded[:-1], strict=True):
            rows.append(
                {
                    "id": task_id,
                    "project": project,
                    "half": half_of[project],
                    "shape": attack["shape"],
                    "reward": reward,
                    "noop": noop_reward,
                    "at_most_noop": reward <= noop_reward + 1e-9,
                    "success": env.unwrapped.solved(breakdown),
                    "gates": list(breakdown.gates),
                    "hidden": breakdown.terms["hidden"].value
                    if "hidden" in breakdown.terms
                    else None,
                }
            )
        print(
            f"[{n + 1}/{len(ids)} {time.time() - start:.0f}s] {task_id} "
            + " ".join(f"{r['shape']}={r['reward']:.3f}" for r in rows[-len(attacks) :])
            + f" noop={noop_reward:.3f}",
            file=sys.stderr,
            flush=True,
        )
        if args.out is not None:  # partial results survive an interrupted run
            _write(args.out, _summary(rows, start), rows)
    env.close()
    summary = _summary(rows, start)
    print(json.dumps(summary, indent=1))
    if args.out is not None:
        _write(args.out, summary, rows)
    return 0


def _write(out: Path, summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))


def _summary(rows: list[dict[str, Any]], start: float) -> dict[str, Any]:
    summary: dict[str, Any] = {"seconds": round(time.time() - start, 1)}
    for half in ("A", "B"):
        mine = [r for r in rows if r["half"] == half]
        summary[half] = {
            "projects": sorted({r["project"] for r in mine}),
            "attacks": len(mine),
            "at_most_noop": sum(r["at_most_noop"] for r in mine),
            "share_at_most_noop": round(sum(r["at_most_noop"] for r in mine) / len(mine), 4)
            if mine
            else None,
            "success": sum(r["success"] for r in mine),
            "gated": sum(bool(r["gates"]) for r in mine),
        }
    by_shape: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        by_shape[r["shape"]][0] += 1
        by_shape[r["shape"]][1] += r["at_most_noop"]
        by_shape[r["shape"]][2] += r["success"]
    summary["by_shape"] = {
        k: dict(zip(("attacks", "at_most_noop", "success"), v, strict=True))
        for k, v in sorted(by_shape.items())
    }
    summary["projects"] = len({r["project"] for r in rows})
    summary["attacks"] = len(rows)
    return summary


if __name__ == "__main__":
    raise SystemExit(main())
