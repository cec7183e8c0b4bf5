"""``bank_stats``: the bug kinds a Bugfix bank serves, as ``tasks verify`` reports them."""

from __future__ import annotations

import gzip
import json
from typing import Any

from forgegym.envs.bugfix.bank import bank_stats
from forgegym.envs.bugfix.real import REAL_BANK_DIR


class _Entries:
    """The two methods ``bank_stats`` reads, over fixed manifest entries."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self._entries = {str(i): entry for i, entry in enumerate(entries)}

    def ids(self) -> list[str]:
        return list(self._entries)

    def entry(self, task_id: str) -> dict[str, Any]:
        return self._entries[task_id]


def _first_entry(pattern: str) -> dict[str, Any]:
    path = sorted(REAL_BANK_DIR.glob(pattern))[0]
    with gzip.open(path, "rt") as f:
        return json.loads(f.readline())


def test_every_shape_of_task_counts_its_operators() -> None:
    composed = _first_entry("*.multi.jsonl.gz")  # two mutants, as {"file", "mutation"}
    single = _first_entry("six-*.jsonl.gz")  # one mutant
    generated = {"mutations": [["f", "off_by_one", 0], ["g", "off_by_one", 1]]}
    stats = bank_stats(_Entries([composed, single, generated]))  # type: ignore[arg-type]
    expected: dict[str, int] = {"off_by_one": 2}
    for record in composed["mutations"]:
        operator = record["mutation"][1]
        expected[operator] = expected.get(operator, 0) + 1
    operator = single["mutation"][1]
    expected[operator] = expected.get(operator, 0) + 1
    assert stats == dict(sorted(expected.items()))
