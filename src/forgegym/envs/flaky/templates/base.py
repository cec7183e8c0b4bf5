"""What every scenario template shares: the :class:`Variant` a scenario is drawn from,
the :class:`Draft` it renders, and the text helpers (substitution, distractor code)."""

from __future__ import annotations

import random
import textwrap
from dataclasses import dataclass, field
from string import Template

__all__ = [
    "KEYS",
    "MODS",
    "NOUNS",
    "PKGS",
    "Draft",
    "Variant",
    "distract_src",
    "distract_tests",
    "fill",
    "swap",
]

PKGS = ("app", "svc", "shop", "core", "backend", "service", "lib", "engine")
MODS = ("ledger", "billing", "orders", "catalog", "metrics", "sessions", "profiles", "routing")
NOUNS = ("invoice", "report", "ticket", "order", "account", "payment", "shipment", "profile")
KEYS = ("alpha", "bravo", "delta", "kilo", "lima", "oscar", "sierra", "tango")


@dataclass
class Variant:
    """The parameters one scenario is rendered from (all drawn from ``rng``)."""

    rng: random.Random
    distractors: int
    pkg: str = ""
    mod: str = ""
    noun: str = ""
    key: str = ""
    #: The code under test and its test file (derived from ``pkg`` and ``mod``).
    src: str = field(init=False, default="")
    test_path: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.pkg = self.rng.choice(PKGS)
        self.mod = self.rng.choice(MODS)
        self.noun = self.rng.choice(NOUNS)
        self.key = self.rng.choice(KEYS)
        self.src, self.test_path = f"{self.pkg}/{self.mod}.py", f"tests/test_{self.mod}.py"

    def num(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)


@dataclass
class Draft:
    """A rendered scenario before validation."""

    source: str
    source_fixed: str
    test: str
    test_fixed: str
    target: str
    #: ``"src"`` or ``"test"`` plus the function holding the root cause.
    fault_file: str
    fault_func: str
    mutant: tuple[str, str]
    summary: str
    partial_source: str | None = None
    partial_test: str | None = None
    extra_files: dict[str, str] = field(default_factory=dict)


def fill(text: str, v: Variant, **kw: object) -> str:
    base = {"pkg": v.pkg, "mod": v.mod, "noun": v.noun, "key": v.key}
    base.update({k: str(val) for k, val in kw.items()})
    return Template(textwrap.dedent(text).lstrip("\n")).substitute(base)


def distract_src(v: Variant) -> str:
    """Distractor helpers in the source (and their tests, from :func:`distract_tests`)."""
    parts = []
    for i in range(v.distractors):
        parts.append(
            fill(
                '''

                def ${noun}_label_$i(value):
                    """Format a ${noun} label (unrelated to the flakiness)."""
                    return "$key-$i:" + str(value).strip().lower()
                ''',
                v,
                i=i,
            )
        )
    return "".join(parts)


def distract_tests(v: Variant) -> str:
    parts = []
    for i in range(v.distractors):
        parts.append(
            fill(
                """

                def test_${noun}_label_$i():
                    assert $mod.${noun}_label_$i("  X ") == "$key-$i:x"
                """,
                v,
                i=i,
            )
        )
    return "".join(parts)


def swap(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise ValueError(f"template bug: {old!r} occurs {text.count(old)} times")
    return text.replace(old, new)
