"""Layering: forgegym's packages form layers, each importing only the layers below it;
no family imports another, nothing outside ``envs/`` names a family, no env imports
``play``, no two modules import each other in a circle, and no module or function
outgrows the size rules. See ``docs/architecture.md``.

At the top level, not under a package's folder: it reads every module of every layer.
The counts ``docs/architecture.md`` shows are computed here (``test_the_architecture_doc_
shows_the_computed_counts``); ``python tests/test_layering.py`` prints them."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import forgegym

SRC = Path(forgegym.__file__).parent

#: Bottom to top: a package may import its own modules and those of the layers before it.
LAYERS: tuple[str, ...] = (
    "sandbox",
    "rewards",
    "core",
    "family",
    "grading",
    "tasklib",
    "curricula",
    "clients",
    "policies",
    "envs",
    "play",
    "integrations",
    "server",
    "bench",
    "cli",
)

#: Imports that cross the layers upward on purpose, each with its reason. Empty: family
#: discovery is the package root's job (``forgegym/__init__``, above every layer, as
#: ``gymnasium/__init__`` imports ``gymnasium.envs``), and the timing marker lives in
#: ``rewards``, the lowest layer that marks a phase. A new entry needs a design note.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}

#: The size rules: no module over ``MAX_MODULE_LINES`` lines, no function over
#: ``MAX_FUNCTION_LINES`` (``def`` to its last line, nested functions included).
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 120

#: Modules over the limit: path under ``src/forgegym`` -> (lines now, reason). Empty since
#: issue 35 split the last three. An entry may only shrink: growing past its number
#: fails, and one under the limit must go.
OVERSIZED_MODULES: dict[str, tuple[int, str]] = {}

#: Functions over the limit: ``path:qualified name`` -> (lines now, reason). Empty since
#: issue 35.
OVERSIZED_FUNCTIONS: dict[str, tuple[int, str]] = {}

FAMILIES = sorted(
    p.name for p in (SRC / "envs").iterdir() if p.is_dir() and (p / "__init__.py").is_file()
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SRC.rglob("*.py") if "data" not in p.relative_to(SRC).parts}


def _module_lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _functions(path: Path) -> dict[str, int]:
    """``qualified name -> lines`` of every function and method in ``path``."""
    found: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    found[name] = (child.end_lineno or child.lineno) - child.lineno + 1
                walk(child, f"{name}.")
            else:
                walk(child, prefix)

    walk(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def _relative(path: Path) -> str:
    return path.relative_to(SRC).as_posix()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (type-only imports run never)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _imports(path: Path, name: str, modules: set[str], *, type_checking: bool = False) -> set[str]:
    """Every forgegym module ``path`` imports at run time (lazy imports inside functions
    included, type-only ones only with ``type_checking``). ``from package import
    submodule`` depends on the submodule, not on what the package's ``__init__`` defines."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = set() if type_checking else _type_checking_nodes(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            submodules = {f"{module}.{a.name}" for a in node.names}
            if submodules <= modules:
                found.update(submodules)
            else:
                found.add(module)
                found.update(submodules & modules)
    return {m for m in found if m == "forgegym" or m.startswith("forgegym.")}


@functools.cache
def _graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    modules = _modules()
    names = set(modules)
    return {
        name: {
            m
            for m in _imports(path, name, names, type_checking=type_checking)
            if m in modules and m != name
        }
        for name, path in modules.items()
    }


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_at_most_five_modules_at_the_top() -> None:
    top = sorted(p.name for p in SRC.glob("*.py"))
    assert len(top) <= 5, top


def test_every_package_is_a_layer() -> None:
    packages = sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").is_file())
    assert set(packages) == set(LAYERS), packages


def _upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import from a layer to a layer above it."""
    found = []
    for module, deps in graph.items():
        mine = _layer(module)
        for dep in deps:
            theirs = _layer(dep)
            if mine is not None and theirs is not None and theirs > mine:
                found.append((module, dep))
    return sorted(found)


def test_layers_import_only_downward() -> None:
    upward = [f"{a} -> {b}" for a, b in _upward(_graph()) if (a, b) not in ALLOWED_UPWARD]
    assert not upward, "\n".join(upward)


def test_every_allowed_upward_import_still_exists() -> None:
    stale = set(ALLOWED_UPWARD) - set(_upward(_graph()))
    assert not stale, f"gone: remove from ALLOWED_UPWARD: {sorted(stale)}"


def _envs_to_play(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted(
        (module, dep)
        for module, deps in graph.items()
        if module.startswith("forgegym.envs")
        for dep in deps
        if dep == "forgegym.play" or dep.startswith("forgegym.play.")
    )


def test_no_env_imports_play() -> None:
    """``play`` (rollouts, evaluation, results, leaderboard, plots) is a tool over the
    envs; an env or a bank that imports it drags the tools into every training process.
    No exception: what envs need (policies, task validation, model clients) lives in the
    layers below them. (The layer order alone forbids it too; this names the rule.)"""
    found = [f"{a} -> {b}" for a, b in _envs_to_play(_graph())]
    assert not found, "\n".join(found)


def test_the_envs_to_play_finder_finds_one() -> None:
    graph = {"forgegym.envs.x.manifest": {"forgegym.play.results"}, "forgegym.play": set()}
    assert _envs_to_play(graph) == [("forgegym.envs.x.manifest", "forgegym.play.results")]


def _build_package(module: str) -> str | None:
    """``forgegym.envs.<family>.build`` when ``module`` is in a family's offline building."""
    parts = module.split(".")
    if len(parts) > 3 and parts[1] == "envs" and parts[3] == "build":
        return ".".join(parts[:4])
    return None


def _imports_of_offline_building(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted(
        (module, dep)
        for module, deps in graph.items()
        for dep in deps
        if (build := _build_package(dep)) is not None and _build_package(module) != build
    )


def test_nothing_imports_a_familys_offline_building() -> None:
    """``envs/<family>/build/`` (generators, manifest writers, validation) runs offline
    (``python -m ...``); nothing at run time imports it, so no env or bank loads it."""
    found = [f"{a} -> {b}" for a, b in _imports_of_offline_building(_graph())]
    assert not found, "\n".join(found)


def test_the_offline_building_finder_finds_one() -> None:
    graph = {
        "forgegym.envs.x.bank": {"forgegym.envs.x.build.manifest"},
        "forgegym.envs.x.build.manifest": {"forgegym.envs.x.build", "forgegym.envs.x.bank"},
        "forgegym.envs.x.build": set(),
    }
    assert _imports_of_offline_building(graph) == [
        ("forgegym.envs.x.bank", "forgegym.envs.x.build.manifest")
    ]


def test_no_module_outside_a_family_imports_one() -> None:
    offenders = []
    for module, deps in _graph().items():
        own = module.split(".")[2] if module.startswith("forgegym.envs.") else None
        for dep in deps:
            parts = dep.split(".")
            if len(parts) > 2 and parts[1] == "envs" and parts[2] in FAMILIES and parts[2] != own:
                offenders.append(f"{module} -> {dep}")
    assert not offenders, "\n".join(sorted(offenders))


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected components of more than one module
    (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph[node]):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for node in sorted(graph):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(circles)


def test_no_import_circles() -> None:
    circles = _circles(_graph())
    assert not circles, circles


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]


def _oversized_modules() -> dict[str, int]:
    return {
        _relative(path): lines
        for path in _modules().values()
        if (lines := _module_lines(path)) > MAX_MODULE_LINES
    }


def _oversized_functions() -> dict[str, int]:
    return {
        f"{_relative(path)}:{name}": lines
        for path in _modules().values()
        for name, lines in _functions(path).items()
        if lines > MAX_FUNCTION_LINES
    }


def _check_sizes(found: dict[str, int], allowed: dict[str, tuple[int, str]], what: str) -> None:
    new = {k: v for k, v in found.items() if k not in allowed}
    grown = {k: (v, allowed[k][0]) for k, v in found.items() if k in allowed and v > allowed[k][0]}
    gone = sorted(set(allowed) - set(found))
    assert not new, f"{what} over the limit (split it): {new}"
    assert not grown, f"allow-listed {what} grew (lines now, allowed): {grown}"
    assert not gone, f"{what} now within the limit: remove from the allow-list: {gone}"


def test_no_module_over_the_line_limit() -> None:
    _check_sizes(_oversized_modules(), OVERSIZED_MODULES, "modules")


def test_no_function_over_the_line_limit() -> None:
    _check_sizes(_oversized_functions(), OVERSIZED_FUNCTIONS, "functions")


def test_function_sizes_count_nested_and_async_definitions(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "class A:\n    def f(self):\n        def g():\n            pass\n"
        "        return g\n\n\nasync def h():\n    pass\n"
    )
    assert _functions(source) == {"A.f": 4, "A.f.g": 2, "h": 2}


def counts() -> dict[str, int]:
    """The import-graph and size counts ``docs/architecture.md`` shows."""
    graph = _graph()
    return {
        "modules": len(graph),
        "upward imports": len(_upward(graph)),
        "import circles (run time)": len(_circles(graph)),
        "import circles (type-checking imports included)": len(
            _circles(_graph(type_checking=True))
        ),
        "`envs` -> `play` imports": len(_envs_to_play(graph)),
        f"modules over {MAX_MODULE_LINES} lines": len(_oversized_modules()),
        f"functions over {MAX_FUNCTION_LINES} lines": len(_oversized_functions()),
    }


def counts_table() -> str:
    rows = ["| count | now |", "|---|---|"]
    rows += [f"| {name} | {value} |" for name, value in counts().items()]
    return "\n".join(rows)


DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
BEGIN, END = "<!-- counts: begin -->", "<!-- counts: end -->"


def test_the_architecture_doc_shows_the_computed_counts() -> None:
    text = DOC.read_text(encoding="utf-8")
    shown = text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip()
    table = counts_table()
    assert shown == table, f"docs/architecture.md: replace the counts table with\n{table}"


def test_the_sandbox_imports_only_the_sandbox() -> None:
    for module, deps in _graph().items():
        if module.startswith("forgegym.sandbox"):
            outside = {d for d in deps if not d.startswith("forgegym.sandbox")}
            assert not outside, (module, outside)


def test_importing_the_rewards_does_not_load_rouge_or_nltk() -> None:
    code = (
        "import sys, forgegym.rewards; print('rouge_score' in sys.modules or 'nltk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


if __name__ == "__main__":
    print(counts_table())
