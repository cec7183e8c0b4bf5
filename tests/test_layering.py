"""Layering: forgegym's packages form layers, each importing only the layers below it;
no family imports another, nothing outside ``envs/`` names a family, and no two modules
import each other in a circle. See ``docs/architecture.md``."""

from __future__ import annotations

import ast
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
    "play",
    "envs",
    "integrations",
    "server",
    "bench",
    "cli",
)

#: Imports that cross the layers upward on purpose, each with its reason.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {
    # Discovery: the registry imports the ``forgegym.envs`` package (never a family) and
    # each family package registers itself; Gymnasium's ``envs/__init__`` does the same.
    ("forgegym.family.registry", "forgegym.envs"): "family discovery",
    # A stdlib-only timing utility (nothing recorded unless a bench activates it); the
    # lint runner marks its ruff calls with it so the throughput bench can attribute them.
    ("forgegym.rewards.lint", "forgegym.grading.phases"): "timing marker",
}

FAMILIES = sorted(
    p.name for p in (SRC / "envs").iterdir() if p.is_dir() and (p / "__init__.py").is_file()
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SRC.rglob("*.py") if "data" not in p.relative_to(SRC).parts}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (type-only imports run never)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """Every forgegym module ``path`` imports at run time (lazy imports inside functions
    included, type-only ones not). ``from package import submodule`` depends on the
    submodule, not on what the package's ``__init__`` defines."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
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


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    names = set(modules)
    return {
        name: {m for m in _imports(path, name, names) if m in modules and m != name}
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


def test_layers_import_only_downward() -> None:
    upward = []
    for module, deps in _graph().items():
        mine = _layer(module)
        for dep in deps:
            theirs = _layer(dep)
            if mine is None or theirs is None or theirs <= mine:
                continue
            if (module, dep) not in ALLOWED_UPWARD:
                upward.append(f"{module} -> {dep}")
    assert not upward, "\n".join(sorted(upward))


def test_no_module_outside_a_family_imports_one() -> None:
    offenders = []
    for module, deps in _graph().items():
        own = module.split(".")[2] if module.startswith("forgegym.envs.") else None
        for dep in deps:
            parts = dep.split(".")
            if len(parts) > 2 and parts[1] == "envs" and parts[2] in FAMILIES and parts[2] != own:
                offenders.append(f"{module} -> {dep}")
    assert not offenders, "\n".join(sorted(offenders))


def test_no_import_circles() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for dep in graph[node]:
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

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert not circles, circles


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
