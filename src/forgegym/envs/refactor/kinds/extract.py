"""Extract a duplicated block into one helper.

Template modules: two to four functions open with the same validation/normalisation
block (parameterised constants, names and tails), then each does its own work. The
refactoring moves the block into one private helper that every function calls. At the
hardest level one more function holds a *near* duplicate (a different constant) that
must stay as it is: merging it changes behaviour.
"""

from __future__ import annotations

import ast
import functools
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from forgegym.envs.refactor.analysis import clone_counts
from forgegym.envs.refactor.kinds.common import Draft, built, test_ids
from forgegym.envs.refactor.kinds.visible import visible_tests
from forgegym.envs.refactor.spec import RefactorSpec, step

__all__ = ["BLOCKS", "build", "build_all", "drafts"]

KIND = "extract_helper"


@dataclass(frozen=True)
class Block:
    """A duplicated block over parameter ``param``, its helper name, the tails that can
    follow it and an input generator."""

    name: str
    param: str
    body: str  # indented by 4, uses {a} and {b} constants
    helper: str
    tails: tuple[tuple[str, str], ...]  # (function name, tail source indented by 4)
    module_doc: str

    def inputs(self, rng: random.Random, a: int, b: int) -> list[Any]:
        if self.name == "text":
            words = ["Alpha", "beta", "GAMMA", "delta", "Epsilon", "zeta", "eta", "x"]
            n = rng.randint(0, 6)
            text = rng.choice(["", " ", "  "]).join(rng.choice(words) for _ in range(n))
            return (
                [rng.choice(["  ", "", "\t"]) + text + rng.choice(["", " ", "\n"])]
                if rng.random() > 0.1
                else [rng.choice([None, 5])]
            )
        if self.name == "numbers":
            if rng.random() < 0.1:
                return [[]]
            return [[rng.randint(a - 3, a + 40) for _ in range(rng.randint(1, 7))]]
        if self.name == "level":
            return [rng.choice([None, rng.randint(a - 10, b + 10), str(rng.randint(a - 5, b + 5))])]
        if self.name == "record":
            keys = [" Name", "AGE", "city ", "Zip", "note"]
            record = {
                rng.choice(keys): rng.choice([None, rng.randint(0, 99), "x"])
                for _ in range(rng.randint(0, 5))
            }
            return [record] if rng.random() > 0.08 else [rng.choice([[1], "text"])]
        raise AssertionError(self.name)


BLOCKS: dict[str, Block] = {
    "text": Block(
        name="text",
        param="text",
        body=(
            "    if not isinstance(text, str):\n"
            '        raise TypeError("expected a string")\n'
            "    text = text.strip().lower()\n"
            '    text = " ".join(text.split()[:{b}])\n'
        ),
        helper="_clean_text",
        tails=(
            ("word_count", "    return len(text.split())\n"),
            ("title_case", '    return " ".join(w.capitalize() for w in text.split())\n'),
            ("initials", '    return "".join(w[0] for w in text.split()).upper()\n'),
            ("longest_word", '    return max(text.split(), key=len, default="")\n'),
            (
                "vowel_share",
                '    letters = [c for c in text if c.isalpha()]\n    if not letters:\n        return 0.0\n    return round(sum(c in "aeiou" for c in letters) / len(letters), {a})\n',
            ),
        ),
        module_doc="Small text utilities.",
    ),
    "numbers": Block(
        name="numbers",
        param="values",
        body=(
            "    if not values:\n"
            '        raise ValueError("no values")\n'
            "    values = [int(v) for v in values]\n"
            "    values = [v for v in values if v >= {a}]\n"
        ),
        helper="_valid_values",
        tails=(
            ("spread", "    return max(values) - min(values) if values else 0\n"),
            ("total", "    return sum(values)\n"),
            ("evens", "    return [v for v in values if v % 2 == 0]\n"),
            ("biggest", "    return sorted(values, reverse=True)[:{b}]\n"),
            (
                "average",
                "    if not values:\n        return None\n    return round(sum(values) / len(values), 3)\n",
            ),
        ),
        module_doc="Summaries of readings.",
    ),
    "level": Block(
        name="level",
        param="level",
        body=(
            "    if level is None:\n"
            "        level = {a}\n"
            "    level = int(level)\n"
            "    level = max({a}, min({b}, level))\n"
        ),
        helper="_clamp_level",
        tails=(
            (
                "level_name",
                '    names = ["low", "mid", "high"]\n    return names[(level - {a}) * 3 // ({b} - {a} + 1)]\n',
            ),
            ("level_bar", '    return "#" * (level - {a}) + "." * ({b} - level)\n'),
            ("level_share", "    return round((level - {a}) / ({b} - {a}), 4)\n"),
            ("next_level", "    return level + 1 if level < {b} else {a}\n"),
        ),
        module_doc="Volume levels.",
    ),
    "record": Block(
        name="record",
        param="record",
        body=(
            "    if not isinstance(record, dict):\n"
            '        raise TypeError("record must be a dict")\n'
            "    record = {{str(k).strip().lower(): v for k, v in record.items()}}\n"
            "    record = {{k: v for k, v in record.items() if v is not None}}\n"
        ),
        helper="_normalise_record",
        tails=(
            ("record_keys", "    return sorted(record)\n"),
            ("record_size", "    return len(record)\n"),
            (
                "numeric_fields",
                "    return sorted(k for k, v in record.items() if isinstance(v, int))\n",
            ),
            (
                "describe_record",
                '    return ", ".join(f"{{k}}={{record[k]}}" for k in sorted(record))\n',
            ),
        ),
        module_doc="Normalising loosely typed records.",
    ),
}


def _constants(block: Block, rng: random.Random) -> tuple[int, int]:
    if block.name == "text":
        return rng.randint(2, 4), rng.randint(3, 6)
    if block.name == "numbers":
        return rng.randint(-5, 10), rng.randint(2, 4)
    if block.name == "level":
        a = rng.randint(0, 3)
        return a, a + rng.randint(6, 12)
    return 0, 0


def _function(name: str, param: str, body: str, tail: str, doc: str) -> str:
    return f'def {name}({param}):\n    """{doc}"""\n' + body + tail


def _oracle(
    block: Block, module: str, names: list[str], a: int, b: int, seed: str
) -> list[list[dict[str, Any]]]:
    rng = random.Random(seed)
    return [
        [{"t": f"{module}:{fn}", "a": block.inputs(rng, a, b)} for fn in names for _ in range(50)]
    ]


def _draw(block: Block, level: int, rng: random.Random) -> tuple[int, int, list[tuple[str, str]]]:
    """The seeded choices of one variant (constants and tails): all it takes from ``rng``."""
    a, b = _constants(block, rng)
    count = {1: 2, 2: 3, 3: 3}[level]
    tails = rng.sample(block.tails, min(count + (1 if level == 3 else 0), len(block.tails)))
    return a, b, tails


def _module(block: Block, level: int) -> str:
    return f"{block.name}_tools" if level < 3 else f"{block.name}_utils"


def build(block: Block, level: int, variant: str, rng: random.Random) -> RefactorSpec | None:
    return _make(block, level, variant, *_draw(block, level, rng))


def _make(
    block: Block, level: int, variant: str, a: int, b: int, tails: list[tuple[str, str]]
) -> RefactorSpec | None:
    count = {1: 2, 2: 3, 3: 3}[level]
    if len(tails) < count:
        return None
    dup_tails, near_tails = tails[:count], tails[count:]
    body = block.body.format(a=a, b=b)
    funcs = []
    for name, tail in dup_tails:
        doc = name.replace("_", " ").capitalize() + "."
        funcs.append((name, _function(name, block.param, body, tail.format(a=a, b=b), doc)))
    near = []
    for name, tail in near_tails:
        # A near duplicate: same shape, another constant -- it is *not* the same block.
        other = block.body.format(a=a + 1, b=b + 1)
        doc = name.replace("_", " ").capitalize() + " (stricter)."
        near.append((name, _function(name, block.param, other, tail.format(a=a, b=b), doc)))
    module = _module(block, level)
    header = f'"""{block.module_doc}"""\n'
    original = header + "".join("\n\n" + src for _, src in funcs + near)
    helper = f"def {block.helper}({block.param}):\n" + body + f"    return {block.param}\n"
    ref_funcs = []
    for name, tail in dup_tails:
        doc = name.replace("_", " ").capitalize() + "."
        ref_funcs.append(
            f"def {name}({block.param}):\n"
            f'    """{doc}"""\n'
            f"    {block.param} = {block.helper}({block.param})\n" + tail.format(a=a, b=b)
        )
    reference = (
        header
        + "\n\n"
        + helper
        + "".join("\n\n" + f for f in ref_funcs)
        + "".join("\n\n" + src for _, src in near)
    )
    names = [n for n, _ in dup_tails + near_tails]
    hidden_rng = random.Random(f"{variant}:{module}:hidden")
    calls = [(fn, block.inputs(hidden_rng, a, b)) for fn in names for _ in range(30)]
    oracle_seed = f"{variant}:{module}:oracle"
    visible_rng = random.Random(f"{variant}:{module}:visible")
    vis = [[(fn, block.inputs(visible_rng, a, b))] for fn in names for _ in range(2)]
    test_path = f"test_{module}.py"
    tests = visible_tests(module, original, vis)
    window = len(block.body.strip("\n").split("\n")) - 2  # statements in the block
    tree = ast.parse(original)
    counts = clone_counts(tree, 2)
    keys = [k for k, c in counts.items() if c >= count and c <= count]
    if not keys:
        return None
    structure: list[dict[str, Any]] = [
        {"req": "clones_below", "path": f"{module}.py", "window": 2, "keys": keys},
        {"req": "shared_helper", "path": f"{module}.py", "functions": [n for n, _ in dup_tails]},
    ]
    del window
    description = (
        f"The functions {', '.join(f'`{n}`' for n, _ in dup_tails)} of `{module}.py` all "
        f"start with the same block that validates and normalises `{block.param}`. Extract "
        "it into one private helper that each of them calls, so the block exists once. "
        "Change nothing else: behaviour (values and exceptions) must stay the same on every "
        "input; hidden checks compare old and new code."
    )
    if near:
        description += " Look closely before merging anything else."
    return RefactorSpec(
        kind=KIND,
        module=module,
        variant=variant,
        level=level,
        title=f"Extract the duplicated block of {module}.py into a helper",
        description=description,
        files={f"{module}.py": original, test_path: tests},
        editable=(f"{module}.py",),
        visible_tests=(test_path,),
        visible_test_ids=test_ids(test_path, tests),
        reference={f"{module}.py": reference},
        checks=[[step(f"{module}:{fn}", f"{module}:{fn}", args) for fn, args in calls]],
        api=[{"module": module, "name": n, "kind": "function"} for n in names],
        structure=structure,
        integrity={"allow_star": False, "max_new_functions": 2},
        original={f"{module}.py": original},
        oracle_factory=lambda: _oracle(block, module, names, a, b, oracle_seed),
        focus=(module, *[n for n, _ in dup_tails]),
    )


def drafts(level: int, module: str | None = None) -> Iterator[Draft]:
    """The specs :func:`build_all` makes (of ``module`` only, if given), not built yet:
    a block's variants share one seeded stream, so earlier variants are drawn (cheap)
    but only a draft's ``make`` builds it."""
    for block in BLOCKS.values():
        name = _module(block, level)
        if module is not None and name != module:
            continue
        rng = random.Random(f"{KIND}:{block.name}:{level}")
        for index in range(5):
            variant = f"d{level}v{index}"
            drawn = _draw(block, level, rng)
            yield name, variant, functools.partial(_make, block, level, variant, *drawn)


def build_all(level: int) -> list[RefactorSpec]:
    return built(drafts(level))
