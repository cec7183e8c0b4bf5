"""The reference corpus: small trusted modules with visible tests and hidden check inputs.

Each module lives in ``data/modules/<name>/`` as three files:

* ``<name>.py``: the reference implementation (trusted; imported in the parent only);
* ``test_<name>.py``: the visible pytest tests shown to the agent;
* ``checks.py``: ``cases(rng) -> [(function, args), ...]``, a seeded input generator for
  the hidden differential checks.

Expected outputs of hidden checks are computed here, in the trusted parent, by calling
the reference; they are never written into a workspace.
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import importlib.util
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "DATA_DIR",
    "HIDDEN_SEED",
    "MODULES_DIR",
    "HiddenCall",
    "ReferenceModule",
    "load_corpus",
    "module_names",
    "plain",
]

DATA_DIR = Path(__file__).parent / "data"
MODULES_DIR = DATA_DIR / "modules"
#: Seed of the hidden input generators (part of the manifest's identity).
HIDDEN_SEED = 20240611
#: Upper bound on hidden calls per module (keeps one CallJob well under a second).
MAX_HIDDEN_CALLS = 80


def plain(value: Any) -> Any:
    """JSON-plain form of a value (tuples become lists), as the sandbox harness sends it."""
    return json.loads(json.dumps(value))


@dataclass(frozen=True)
class HiddenCall:
    """One differential check: call ``function(*args)``; ``expected`` is
    ``{"value": v}`` or ``{"raises": "ExceptionTypeName"}`` from the reference."""

    function: str
    args: list[Any]
    expected: dict[str, Any]

    def describe(self, limit: int = 200) -> str:
        """``name(arg, ...)`` as a user would write it in a bug report."""
        text = f"{self.function}({', '.join(json.dumps(a) for a in self.args)})"
        return text if len(text) <= limit else text[: limit - 3] + "..."


def _load_file_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class ReferenceModule:
    """One corpus module (see the module docstring)."""

    name: str
    source: str
    test_source: str

    @property
    def module_path(self) -> str:
        return f"{self.name}.py"

    @property
    def test_path(self) -> str:
        return f"test_{self.name}.py"

    @property
    def digest(self) -> str:
        """Hash of the module's three files; the manifest records it to detect staleness."""
        checks = (MODULES_DIR / self.name / "checks.py").read_text(encoding="utf-8")
        blob = "\0".join((self.source, self.test_source, checks, str(HIDDEN_SEED)))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @functools.cached_property
    def functions(self) -> tuple[str, ...]:
        """Top-level public functions of the reference module, in source order."""
        tree = ast.parse(self.source)
        return tuple(
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
        )

    @functools.cached_property
    def test_functions(self) -> tuple[str, ...]:
        """Top-level ``test_*`` functions of the visible test file, in source order."""
        tree = ast.parse(self.test_source)
        return tuple(
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
        )

    def test_ids(self, functions: tuple[str, ...] | None = None) -> tuple[str, ...]:
        """pytest node ids of (some of) the visible tests."""
        return tuple(f"{self.test_path}::{fn}" for fn in (functions or self.test_functions))

    def reference(self) -> ModuleType:
        """The trusted reference module, imported in this (parent) process."""
        return _reference_module(self.name)

    def hidden_calls(self) -> tuple[HiddenCall, ...]:
        """The hidden differential checks with reference outputs (deterministic)."""
        return _hidden_calls(self.name)


@functools.cache
def _reference_module(name: str) -> ModuleType:
    # A private module name, so the reference never shadows or is shadowed by anything.
    return _load_file_module(MODULES_DIR / name / f"{name}.py", f"_forgegym_bugfix_ref_{name}")


@functools.cache
def _hidden_calls(name: str) -> tuple[HiddenCall, ...]:
    checks = _load_file_module(MODULES_DIR / name / "checks.py", f"_forgegym_bugfix_checks_{name}")
    reference = _reference_module(name)
    rng = random.Random(f"{name}:{HIDDEN_SEED}")
    calls: list[HiddenCall] = []
    seen: set[str] = set()
    for function, args in checks.cases(rng):
        args = plain(list(args))
        key = json.dumps([function, args], sort_keys=True)
        if key in seen:  # duplicate inputs add cost, not information
            continue
        seen.add(key)
        try:
            value = getattr(reference, function)(*copy.deepcopy(args))
        except Exception as exc:  # noqa: BLE001 - the reference raising is an expected output
            expected: dict[str, Any] = {"raises": type(exc).__name__}
        else:
            expected = {"value": plain(value)}
        calls.append(HiddenCall(function=function, args=args, expected=expected))
        if len(calls) >= MAX_HIDDEN_CALLS:
            break
    return tuple(calls)


def module_names() -> tuple[str, ...]:
    """Names of every corpus module, sorted."""
    return tuple(sorted(p.name for p in MODULES_DIR.iterdir() if (p / f"{p.name}.py").is_file()))


@functools.cache
def load_corpus() -> dict[str, ReferenceModule]:
    """Every corpus module by name."""
    corpus = {}
    for name in module_names():
        folder = MODULES_DIR / name
        corpus[name] = ReferenceModule(
            name=name,
            source=(folder / f"{name}.py").read_text(encoding="utf-8"),
            test_source=(folder / f"test_{name}.py").read_text(encoding="utf-8"),
        )
    return corpus
