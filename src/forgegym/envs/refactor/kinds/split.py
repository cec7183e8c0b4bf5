"""Split a module into a package that keeps every old import path working.

``m.py`` becomes ``m/__init__.py`` plus submodules holding the public functions as the
task assigns them; ``from m import f`` must still work for every public name, the new
paths (``from m.sub import f``) work too, and ``m.py`` is gone (moved, not copied). At
the hardest level a second module imports the functions and must be pointed at their
new homes.
"""

from __future__ import annotations

import ast
import functools
import random
from collections.abc import Iterator, Sequence

from forgegym.envs.refactor.corpus import CorpusModule, load_corpus
from forgegym.envs.refactor.kinds.common import Draft, Segment, built, segments, test_ids
from forgegym.envs.refactor.spec import RefactorSpec, step

__all__ = ["SEED_LAYOUT", "build", "build_all", "build_for", "drafts", "split_sources"]

KIND = "split_package"
SUBMODULE_NAMES = ("core", "ops", "extra", "tools", "basic", "advanced", "parsing", "rendering")
#: The seed task: ``stats.py`` -> ``stats/`` with the layout the issue names.
SEED_LAYOUT = {"central": ("mean", "median"), "spread": ("std_dev", "percentile")}
VARIANTS_PER_LEVEL = 2


@functools.lru_cache(maxsize=64)
def _segments(source: str) -> tuple[Segment, ...]:
    """A module's segments, parsed once for all its layouts (read-only)."""
    return tuple(segments(source))


def _groups_ok(module: CorpusModule, groups: dict[str, tuple[str, ...]]) -> bool:
    """No import cycle between submodules (public functions calling each other)."""
    segs = _segments(module.source)
    home = {fn: sub for sub, fns in groups.items() for fn in fns}
    edges: dict[str, set[str]] = {sub: set() for sub in groups}
    for seg in segs:
        if seg.kind == "function" and seg.binds & home.keys():
            (name,) = seg.binds
            for used in seg.uses & home.keys():
                if home[used] != home[name]:
                    edges[home[name]].add(home[used])
    # cycle detection (tiny graphs)
    visiting: set[str] = set()
    done: set[str] = set()

    def cyclic(node: str) -> bool:
        if node in done:
            return False
        if node in visiting:
            return True
        visiting.add(node)
        if any(cyclic(n) for n in edges[node]):
            return True
        visiting.discard(node)
        done.add(node)
        return False

    return not any(cyclic(n) for n in edges)


def split_sources(module: CorpusModule, groups: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """The reference package: each submodule holds its functions, the private helpers and
    constants only it uses and the imports it needs; helpers several submodules use go to
    ``_common.py``; ``__init__`` re-exports every public name explicitly."""
    name = module.name
    segs = _segments(module.source)
    home: dict[str, str] = {fn: sub for sub, fns in groups.items() for fn in fns}
    imports = [s for s in segs if s.kind == "import"]
    others = [
        s for s in segs if s.kind not in ("import", "docstring") and not (s.binds & home.keys())
    ]

    # Which submodules need each helper segment (transitively through helpers).
    def needed_by(seg: Segment) -> set[str]:
        subs: set[str] = set()
        frontier = set(seg.binds)
        seen: set[str] = set()
        while frontier:
            current = frontier.pop()
            seen.add(current)
            for s in segs:
                if current in s.uses:
                    if s.binds & home.keys():
                        subs.update(home[b] for b in s.binds & home.keys())
                    else:
                        frontier.update(s.binds - seen)
        return subs

    placement: dict[int, str] = {}
    for seg in others:
        subs = needed_by(seg)
        placement[id(seg)] = next(iter(subs)) if len(subs) == 1 else "_common"
    files: dict[str, list[Segment]] = {sub: [] for sub in groups}
    files["_common"] = []
    for seg in segs:
        if seg.kind in ("import", "docstring"):
            continue
        target = home[next(iter(seg.binds))] if seg.binds & home.keys() else placement[id(seg)]
        files[target].append(seg)
    out: dict[str, str] = {}
    for sub, body in files.items():
        if not body:
            continue
        defined = set().union(*(s.binds for s in body))
        used = set().union(*(s.uses for s in body)) - defined
        std = [s.source for s in imports if s.binds & used]
        local: list[str] = []
        for other, other_body in files.items():
            if other == sub or not other_body:
                continue
            names = sorted(used & set().union(*(s.binds for s in other_body)))
            if names:
                local.append(f"from {name}.{other} import {', '.join(names)}\n")
        text = f'"""{_sub_doc(name, sub, groups)}"""\n'
        for block in (std, sorted(local)):
            if block:
                text += "\n" + "".join(block)
        text = (
            text.rstrip("\n") + "\n\n\n" + "\n\n".join(s.source.rstrip("\n") + "\n" for s in body)
        )
        out[f"{name}/{sub}.py"] = _tidy(text)
    doc = ast.get_docstring(ast.parse(module.source)) or f"The {name} package."
    exports = [f"from {name}.{sub} import {', '.join(fns)}\n" for sub, fns in groups.items()]
    public = sorted(f for fns in groups.values() for f in fns)
    public += sorted(
        b for s in segs if s.kind == "assign" for b in s.binds if not b.startswith("_")
    )
    extra_values = [b for b in public if b not in home]
    if extra_values:
        by_file = {
            sub: sorted(b for b in extra_values if any(b in s.binds for s in files[sub]))
            for sub in files
        }
        exports += [f"from {name}.{sub} import {', '.join(v)}\n" for sub, v in by_file.items() if v]
    init = (
        f'"""{doc}"""\n\n'
        + "".join(exports)
        + "\n__all__ = ["
        + ", ".join(f'"{p}"' for p in public)
        + "]\n"
    )
    out[f"{name}/__init__.py"] = _tidy(init)
    return out


def _sub_doc(name: str, sub: str, groups: dict[str, tuple[str, ...]]) -> str:
    if sub == "_common":
        return f"Helpers shared by the submodules of {name}."
    return f"{name}: {', '.join(groups[sub])}."


def _tidy(text: str) -> str:
    """Blank lines as ruff format would put them (two before top-level defs)."""
    lines = text.split("\n")
    out: list[str] = []
    for line in lines:
        if line == "" and len(out) >= 2 and out[-1] == "" and out[-2] == "":
            continue
        out.append(line)
    return "\n".join(out).rstrip("\n") + "\n"


def _partition(functions: Sequence[str], parts: int, rng: random.Random) -> list[tuple[str, ...]]:
    order = list(functions)
    rng.shuffle(order)
    cuts = sorted(rng.sample(range(1, len(order)), parts - 1))
    bounds = [0, *cuts, len(order)]
    groups = [
        tuple(sorted(order[a:b], key=functions.index))
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    return sorted(groups, key=lambda g: functions.index(g[0]))


def _consumer(module: CorpusModule, functions: Sequence[str]) -> str:
    lines = [
        f'"""Reports built on {module.name} (imports the old paths)."""\n',
        "\n",
        f"from {module.name} import {', '.join(functions)}\n",
    ]
    for fn in functions:
        lines += ["\n", "\n", f"def use_{fn}(*args):\n", f"    return {fn}(*args)\n"]
    return "".join(lines)


def build(
    module: CorpusModule, level: int, variant: str, groups: dict[str, tuple[str, ...]]
) -> RefactorSpec | None:
    if not _groups_ok(module, groups):
        return None
    return _make(module, level, variant, groups)


def _make(
    module: CorpusModule, level: int, variant: str, groups: dict[str, tuple[str, ...]]
) -> RefactorSpec:
    """The spec of a layout :func:`_groups_ok` accepts."""
    name = module.name
    package = split_sources(module, groups)
    files = {module.module_path: module.source, module.test_path: module.test_source}
    editable = [module.module_path]
    reference = dict(package)
    calls = module.calls()
    home = {fn: sub for sub, fns in groups.items() for fn in fns}
    steps = [step(f"{name}:{fn}", f"{name}:{fn}", args) for fn, args in calls]
    # The new import paths work too (every other call goes through them).
    steps += [
        step(f"{name}.{home[fn]}:{fn}", f"{name}:{fn}", args, new=True) for fn, args in calls[::2]
    ]
    structure: list[dict[str, object]] = [
        {"req": "absent", "path": module.module_path},
        {"req": "exists", "path": f"{name}/__init__.py"},
    ]
    structure += [
        {"req": "defines", "path": f"{name}/{sub}.py", "names": list(fns)}
        for sub, fns in groups.items()
    ]
    api = [{"module": name, "name": fn, "kind": "function"} for fn in module.functions] + [
        {"module": f"{name}.{sub}", "name": fn, "kind": "function", "new": True}
        for sub, fns in groups.items()
        for fn in fns
    ]
    layout = "\n".join(
        f"- `{name}/{sub}.py`: {', '.join(f'`{f}`' for f in fns)}" for sub, fns in groups.items()
    )
    description = (
        f"`{module.module_path}` has grown too big. Split it into a package `{name}/`:\n\n"
        f"{layout}\n\n"
        f"Private helpers may live where they are used (or in a private submodule). "
        f"`{name}/__init__.py` must re-export every public name explicitly (no `import *`), "
        f"so that `from {name} import {', '.join(module.functions)}` keeps working, and "
        f"the new paths (`from {name}.<sub> import ...`) work too. Move the code, do not "
        f"copy it: delete `{module.module_path}` (a package with the same name shadows "
        "it). Behaviour must not change; hidden checks compare the old and new code on "
        "many inputs."
    )
    consumer_fns: list[str] = []
    if level >= 3:
        consumer_fns = list(module.functions[:3])
        files["report.py"] = _consumer(module, consumer_fns)
        editable.append("report.py")
        new_imports = "".join(
            f"from {name}.{sub} import {', '.join(f for f in fns if f in consumer_fns)}\n"
            for sub, fns in groups.items()
            if any(f in consumer_fns for f in fns)
        )
        reference["report.py"] = files["report.py"].replace(
            f"from {name} import {', '.join(consumer_fns)}\n", new_imports
        )
        structure.append(
            {
                "req": "imports_from",
                "path": "report.py",
                "names": {f: f"{name}.{home[f]}" for f in consumer_fns},
            }
        )
        steps += [
            step(f"report:use_{fn}", f"{name}:{fn}", args)
            for fn, args in calls
            if fn in consumer_fns
        ][:30]
        description += (
            f"\n\n`report.py` imports these functions from `{name}`; point its imports at "
            "their new submodules."
        )
    return RefactorSpec(
        kind=KIND,
        module=name,
        variant=variant,
        level=level,
        title=f"Split {module.module_path} into a package",
        description=description,
        files=files,
        editable=tuple(editable),
        creatable=(f"{name}/*.py",),
        visible_tests=(module.test_path,),
        visible_test_ids=test_ids(module.test_path, module.test_source),
        reference=reference,
        deleted=(module.module_path,),
        checks=[steps],
        api=api,
        structure=structure,
        integrity={
            "absent_original": module.module_path,
            "package": f"{name}/__init__.py",
            "single_definition": list(module.functions),
            "moved": {fn: module.module_path for fn in module.functions},
            "allow_star": False,
        },
        original={module.module_path: module.source},
        oracle_factory=lambda: [[{"t": f"{name}:{fn}", "a": a} for fn, a in module.oracle_calls()]],
        focus=(name, *module.functions),
    )


def drafts(level: int, module: str | None = None) -> Iterator[Draft]:
    """The specs :func:`build_all` makes (of corpus module ``module`` only, if given),
    not built yet: layouts are drawn and checked for import cycles (what decides which
    variants exist), ``make`` builds the package."""
    corpus = load_corpus()
    for name in corpus if module is None else [module] if module in corpus else []:
        yield from _module_drafts(corpus[name], level)


def _module_drafts(module: CorpusModule, level: int) -> Iterator[Draft]:
    name = module.name
    functions = module.functions
    if len(functions) < 2:
        return
    if name == "stats" and level == 1 and _groups_ok(module, dict(SEED_LAYOUT)):
        yield name, "seed", functools.partial(_make, module, 1, "seed", dict(SEED_LAYOUT))
    parts = 2 if level == 1 or len(functions) < 3 else 3
    rng = random.Random(f"{KIND}:{name}:{level}")
    seen: set[str] = set()
    made = 0
    for attempt in range(12):
        if made >= VARIANTS_PER_LEVEL:
            break
        chosen = _partition(functions, parts, rng)
        labels = rng.sample(SUBMODULE_NAMES, parts)
        groups = {label: fns for label, fns in zip(labels, chosen, strict=True)}
        key = repr(sorted(chosen))
        if key in seen:
            continue
        seen.add(key)
        if _groups_ok(module, groups):
            variant = f"d{level}v{attempt}"
            yield name, variant, functools.partial(_make, module, level, variant, groups)
            made += 1


def build_for(name: str, level: int) -> list[RefactorSpec]:
    """The specs of one corpus module at one level (deterministic)."""
    return built(_module_drafts(load_corpus()[name], level))


def build_all(level: int) -> list[RefactorSpec]:
    return built(drafts(level))
