"""Remove dead code: unused private functions, unused constants and imports,
statements after a ``return``, ``if False:`` blocks and unused locals.

The starting module is a corpus module with seeded dead code injected; the reference
is the module without it. At the hardest level a *live* private helper that looks
legacy (``_compat_*``) is added as a distractor: removing it breaks behaviour.
"""

from __future__ import annotations

import ast
import functools
import random
from collections.abc import Iterator
from dataclasses import dataclass

from forgegym.envs.refactor.corpus import CorpusModule, load_corpus
from forgegym.envs.refactor.kinds.common import Draft, built, test_ids
from forgegym.envs.refactor.spec import RefactorSpec, step

__all__ = ["build", "build_all", "build_for", "drafts", "inject"]

KIND = "dead_code"
INJECTIONS = (
    "unused_function",
    "unused_constant",
    "unused_import",
    "after_return",
    "if_false",
    "unused_local",
)
_IMPORTS = ("itertools", "functools", "string", "textwrap", "operator")


@dataclass
class _Module:
    lines: list[str]

    @property
    def text(self) -> str:
        return "".join(self.lines)


def _functions(text: str) -> list[ast.FunctionDef]:
    return [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]


def _body_indent(func: ast.FunctionDef, lines: list[str]) -> str:
    first = lines[func.body[0].lineno - 1]
    return first[: len(first) - len(first.lstrip())]


def _first_code_index(func: ast.FunctionDef) -> int:
    """Index into ``func.body`` of the first statement after the docstring."""
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return 1 if len(body) > 1 else 0
    return 0


def inject(
    source: str, kinds: list[str], rng: random.Random
) -> tuple[str, list[dict[str, object]]] | None:
    """``source`` with dead code of each kind in ``kinds`` added, and the structure
    requirements that say it is gone. ``None`` when a kind has no place to go."""
    text = source
    reqs: list[dict[str, object]] = []
    for kind in kinds:
        lines = text.splitlines(keepends=True)
        funcs = [f for f in _functions(text) if not f.name.startswith("_")]
        if kind == "unused_function":
            victim = rng.choice(funcs)
            segment = "".join(lines[victim.lineno - 1 : victim.end_lineno])
            name = f"_legacy_{victim.name}"
            segment = segment.replace(f"def {victim.name}(", f"def {name}(", 1)
            end = victim.end_lineno or 0
            lines[end:end] = ["\n", "\n", segment]
            reqs.append({"req": "not_defined", "name": name})
        elif kind == "unused_constant":
            name = rng.choice(["_MAX_ITEMS", "_DEFAULT_LIMIT", "_OLD_SEPARATOR", "_RETRY_COUNT"])
            value = rng.choice(["64", "10", '"; "', "3"])
            at = _after_header(text)
            lines[at:at] = [f"{name} = {value}\n", "\n"]
            reqs.append({"req": "not_defined", "name": name})
        elif kind == "unused_import":
            used = {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
            choices = [m for m in _IMPORTS if m not in used and f"import {m}" not in text]
            if not choices:
                return None
            module = rng.choice(choices)
            at = _after_docstring(text)
            lines[at:at] = [f"import {module}\n"] + (["\n"] if not _has_imports(text) else [])
            reqs.append({"req": "not_defined", "name": module})
        elif kind in ("after_return", "if_false", "unused_local"):
            candidates = funcs
            if kind == "after_return":
                candidates = [f for f in funcs if isinstance(f.body[-1], ast.Return)]
            if not candidates:
                return None
            victim = rng.choice(candidates)
            indent = _body_indent(victim, lines)
            if kind == "after_return":
                param = victim.args.args[0] if victim.args.args else None
                dead = f"{indent}return {param.arg if param else 'None'}\n"
                end = victim.end_lineno or 0
                lines[end:end] = [dead]
                reqs.append({"req": "no_unreachable", "function": victim.name})
            elif kind == "if_false":
                at = victim.body[_first_code_index(victim)].lineno - 1
                lines[at:at] = [
                    f"{indent}if False:\n",
                    f'{indent}    raise RuntimeError("old code path")\n',
                ]
                reqs.append({"req": "no_constant_if", "function": victim.name})
            else:
                param = victim.args.args[0] if victim.args.args else None
                at = victim.body[_first_code_index(victim)].lineno - 1
                value = f"repr({param.arg})" if param else "None"
                lines[at:at] = [f"{indent}_previous = {value}\n"]
                reqs.append({"req": "no_local", "function": victim.name, "name": "_previous"})
        text = "".join(lines)
    return text, reqs


def _has_imports(text: str) -> bool:
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.parse(text).body)


def _after_docstring(text: str) -> int:
    tree = ast.parse(text)
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return (first.end_lineno or 0) + 1
    return 0


def _after_header(text: str) -> int:
    tree = ast.parse(text)
    at = 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ):
            at = (node.end_lineno or 0) + 1
        else:
            break
    return at


def _decoy(source: str, rng: random.Random) -> tuple[str, str] | None:
    """Route one public function's result through a live ``_compat_*`` helper."""
    funcs = [
        f
        for f in _functions(source)
        if not f.name.startswith("_") and isinstance(f.body[-1], ast.Return) and f.body[-1].value
    ]
    if not funcs:
        return None
    victim = rng.choice(funcs)
    lines = source.splitlines(keepends=True)
    ret = victim.body[-1]
    assert isinstance(ret, ast.Return) and ret.value is not None
    if ret.lineno != ret.end_lineno:
        return None
    line = lines[ret.lineno - 1]
    expr = ast.get_source_segment(source, ret.value) or ""
    lines[ret.lineno - 1] = line.replace(f"return {expr}", f"return _compat_result({expr})", 1)
    helper = [
        "def _compat_result(value):\n",
        '    """Kept for callers that relied on the old result type."""\n',
        "    return value\n",
        "\n",
        "\n",
    ]
    at = victim.lineno - 1 - len(victim.decorator_list)
    lines[at:at] = helper
    return "".join(lines), victim.name


_Drawn = tuple[str, str | None, str, list[dict[str, object]]]


def _draw(module: CorpusModule, level: int, rng: random.Random) -> _Drawn | None:
    """All one variant takes from ``rng``: the live module (with its decoy, if any) and
    the dead code injected; ``None`` when the injection has no place to go."""
    count = {1: 2, 2: 3, 3: 5}[level]
    live = module.source
    decoy = None
    if level >= 3:
        made = _decoy(module.source, rng)
        if made is None:
            return None
        live, decoy = made
    kinds = rng.sample(INJECTIONS, count)
    made_dead = inject(live, kinds, rng)
    if made_dead is None:
        return None
    dead, reqs = made_dead
    return live, decoy, dead, reqs


def build(
    module: CorpusModule, level: int, variant: str, rng: random.Random
) -> RefactorSpec | None:
    drawn = _draw(module, level, rng)
    return None if drawn is None else _make(module, level, variant, drawn)


def _make(module: CorpusModule, level: int, variant: str, drawn: _Drawn) -> RefactorSpec:
    name = module.name
    live, decoy, dead, reqs = drawn
    steps = [step(f"{name}:{fn}", f"{name}:{fn}", args) for fn, args in module.calls()]
    description = (
        f"`{module.module_path}` carries dead code: code that can never run or whose "
        "result is never used (unused private functions, constants and imports, "
        "unreachable statements, unused local variables). Remove all of it and nothing "
        "else: every public function must keep its behaviour and signature."
    )
    if decoy:
        description += " Careful: not every helper that looks old is unused."
    return RefactorSpec(
        kind=KIND,
        module=name,
        variant=variant,
        level=level,
        title=f"Remove the dead code from {module.module_path}",
        description=description,
        files={module.module_path: dead, module.test_path: module.test_source},
        editable=(module.module_path,),
        visible_tests=(module.test_path,),
        visible_test_ids=test_ids(module.test_path, module.test_source),
        reference={module.module_path: live},
        checks=[steps],
        api=[{"module": name, "name": fn, "kind": "function"} for fn in module.functions],
        structure=reqs,
        integrity={"allow_star": False, "max_new_functions": 0},
        original={module.module_path: live},
        oracle_factory=lambda: [[{"t": f"{name}:{fn}", "a": a} for fn, a in module.oracle_calls()]],
        focus=(name,),
    )


def drafts(level: int, module: str | None = None) -> Iterator[Draft]:
    """The specs :func:`build_all` makes (of corpus module ``module`` only, if given),
    not built yet: the dead code is drawn and injected (what decides whether a variant
    exists), ``make`` builds the rest."""
    corpus = load_corpus()
    for name in corpus if module is None else [module] if module in corpus else []:
        yield from _module_drafts(corpus[name], level)


def _module_drafts(module: CorpusModule, level: int) -> Iterator[Draft]:
    rng = random.Random(f"{KIND}:{module.name}:{level}")
    made = 0
    for attempt in range(6):
        drawn = _draw(module, level, rng)
        if drawn is not None:
            made += 1
            variant = f"d{level}v{attempt}"
            yield module.name, variant, functools.partial(_make, module, level, variant, drawn)
        if made >= 2:
            break


def build_for(name: str, level: int) -> list[RefactorSpec]:
    """The specs of one corpus module at one level (deterministic)."""
    return built(_module_drafts(load_corpus()[name], level))


def build_all(level: int) -> list[RefactorSpec]:
    return built(drafts(level))
