"""Layering: the sandbox imports nothing above it, and nothing outside ``envs/<family>/``
imports a family (families are reached through :mod:`forgegym.family`)."""

from __future__ import annotations

import ast
from pathlib import Path

import forgegym

SRC = Path(forgegym.__file__).parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def _modules(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.py") if "data" not in p.relative_to(SRC).parts]


def test_the_sandbox_imports_only_the_sandbox() -> None:
    # Benchmarks drive whole environments; they sit on top, not inside the layer.
    for path in [p for p in _modules(SRC / "sandbox") if not p.name.endswith("bench.py")]:
        outside = {
            n
            for n in _imports(path)
            if n.startswith("forgegym") and not n.startswith("forgegym.sandbox")
        }
        assert not outside, (path.name, outside)


def test_no_module_outside_a_family_imports_one() -> None:
    for path in _modules(SRC):
        relative = path.relative_to(SRC).parts
        if relative[0] == "envs":
            continue
        families = {n for n in _imports(path) if n.startswith("forgegym.envs.")}
        assert not families, (str(path.relative_to(SRC)), families)


def test_importing_the_rewards_does_not_load_rouge_or_nltk() -> None:
    import subprocess
    import sys

    code = (
        "import sys, forgegym.rewards; print('rouge_score' in sys.modules or 'nltk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
