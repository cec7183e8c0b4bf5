"""The refactoring corpus: the Bugfix corpus of small modules plus this family's own
modules (``data/modules/<name>/``, same three-file layout, e.g. the seed ``stats``).

A module of this family's folder overrides a Bugfix module of the same name. Hidden
inputs are the module's ``checks.cases(rng)`` plus *property-style* variations derived
from them (boundary integers, empty and reversed sequences, case changes), so the
checks exercise inputs that neither the visible tests nor the case list spell out.
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import importlib.util
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgegym.tasklib.corpus import MODULES_DIR as BUGFIX_MODULES_DIR

__all__ = [
    "DATA_DIR",
    "HIDDEN_SEED",
    "MODULES_DIR",
    "CorpusModule",
    "load_corpus",
    "variations",
]

DATA_DIR = Path(__file__).parent / "data"
MODULES_DIR = DATA_DIR / "modules"
HIDDEN_SEED = 20261201
#: Calls per module, case list and variations together.
MAX_CALLS = 140


@dataclass(frozen=True)
class CorpusModule:
    """One module: ``<name>.py``, ``test_<name>.py`` and ``checks.py`` from ``folder``."""

    name: str
    folder: Path
    source: str
    test_source: str

    @property
    def module_path(self) -> str:
        return f"{self.name}.py"

    @property
    def test_path(self) -> str:
        return f"test_{self.name}.py"

    @functools.cached_property
    def functions(self) -> tuple[str, ...]:
        """Top-level public functions, in source order."""
        return tuple(
            node.name
            for node in ast.parse(self.source).body
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
        )

    @functools.cached_property
    def test_functions(self) -> tuple[str, ...]:
        return tuple(
            node.name
            for node in ast.parse(self.test_source).body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
        )

    @property
    def digest(self) -> str:
        checks = (self.folder / "checks.py").read_text(encoding="utf-8")
        blob = "\0".join((self.source, self.test_source, checks, str(HIDDEN_SEED)))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def calls(self) -> tuple[tuple[str, list[Any]], ...]:
        """The hidden inputs: ``(function, args)`` pairs, deterministic."""
        return _calls(self.name)

    def oracle_calls(self) -> tuple[tuple[str, list[Any]], ...]:
        """A much larger input set (other seeds, more variations) used only offline, to
        tell mutants that can be detected at all from likely-equivalent ones."""
        return _calls(self.name, oracle=True)


def _is_plain(value: Any) -> bool:
    try:
        return json.loads(json.dumps(value)) == value
    except (TypeError, ValueError):
        return False


def _vary(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([0, 1, -1, value + 1, value - 1, value * 2])
    if isinstance(value, float):
        return rng.choice([0.0, -value, value / 2, value + 0.5])
    if isinstance(value, str):
        return rng.choice(["", value.upper(), value[::-1], value + value[:1], value[1:]])
    if isinstance(value, list):
        return rng.choice([[], value[::-1], value + value[:1], value[1:]])
    return value


def variations(
    calls: list[tuple[str, list[Any]]], rng: random.Random, n: int
) -> list[tuple[str, list[Any]]]:
    """``n`` property-style variations: one argument of a known call changed to a
    boundary or structural neighbour (0, ±1, empty, reversed, case-changed)."""
    out: list[tuple[str, list[Any]]] = []
    if not calls:
        return out
    for _ in range(n * 3):
        if len(out) >= n:
            break
        function, args = rng.choice(calls)
        if not args:
            continue
        new = copy.deepcopy(args)
        index = rng.randrange(len(new))
        new[index] = _vary(new[index], rng)
        if _is_plain(new):
            out.append((function, new))
    return out


@functools.cache
def _calls(name: str, oracle: bool = False) -> tuple[tuple[str, list[Any]], ...]:
    module = load_corpus()[name]
    spec = importlib.util.spec_from_file_location(
        f"_forgegym_refactor_checks_{name}", module.folder / "checks.py"
    )
    assert spec is not None and spec.loader is not None
    checks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checks)
    seeds = [f"{name}:{HIDDEN_SEED}"]
    if oracle:
        seeds = [f"{name}:{HIDDEN_SEED}:oracle:{i}" for i in range(6)]
    base: list[tuple[str, list[Any]]] = []
    pool: list[tuple[str, list[Any]]] = []
    for seed in seeds:
        rng = random.Random(seed)
        cases = [(str(f), json.loads(json.dumps(list(a)))) for f, a in checks.cases(rng)]
        base.extend(cases)
        pool.extend(variations(cases, rng, 100 if oracle else 60))
    seen: set[str] = set()
    out: list[tuple[str, list[Any]]] = []
    limit = MAX_CALLS * 2 if oracle else MAX_CALLS
    for function, args in [*base, *pool]:
        key = json.dumps([function, args], sort_keys=True)
        if key in seen or function not in module.functions:
            continue
        seen.add(key)
        out.append((function, args))
        if len(out) >= limit:
            break
    return tuple(out)


def _folders() -> dict[str, Path]:
    folders: dict[str, Path] = {}
    for root in (BUGFIX_MODULES_DIR, MODULES_DIR):
        for folder in sorted(root.iterdir()):
            if (folder / f"{folder.name}.py").is_file() and (folder / "checks.py").is_file():
                folders[folder.name] = folder
    return folders


@functools.cache
def load_corpus() -> dict[str, CorpusModule]:
    """Every corpus module by name (this family's own override Bugfix's)."""
    corpus: dict[str, CorpusModule] = {}
    for name, folder in sorted(_folders().items()):
        corpus[name] = CorpusModule(
            name=name,
            folder=folder,
            source=(folder / f"{name}.py").read_text(encoding="utf-8"),
            test_source=(folder / f"test_{name}.py").read_text(encoding="utf-8"),
        )
    return corpus
