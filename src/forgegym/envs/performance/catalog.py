"""The data structures of ``Forge/Performance-v0``: interface, asked complexity,
trace sizes, and the sources of the reference, naive and stub start states.

Sources live in ``data/structures/<name>/{reference,naive,stub}.py``; the injected bugs
of the fast-but-buggy start state are ``(search, replace, description)`` edits of the
reference, each applying exactly once (checked by :func:`Structure.buggy_source`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["STRUCTURES", "Bug", "Structure", "structure"]

DATA = Path(__file__).parent / "data" / "structures"


@dataclass(frozen=True)
class Bug:
    search: str
    replace: str
    description: str


@dataclass(frozen=True)
class Structure:
    """One data structure the family asks for."""

    name: str
    title: str
    module: str  # module name in the workspace, e.g. ``lru_cache``
    class_name: str
    complexity: str  # the asked per-operation complexity, e.g. ``O(1)``
    interface: str  # the contract, shown to the agent
    size: int  # the smallest measured structure size n (then 4n, 16n)
    ops: int  # operations per measured run (after the fill phase)
    bugs: tuple[Bug, ...] = field(default_factory=tuple)

    @property
    def path(self) -> str:
        return f"{self.module}.py"

    @property
    def test_path(self) -> str:
        return f"test_{self.module}.py"

    def source(self, kind: str) -> str:
        """``reference``, ``naive`` or ``stub`` source (a stub is derived from the
        reference when the structure ships none)."""
        if kind == "stub" and not (DATA / self.name / "stub.py").is_file():
            return _stub_of(_read(self.name, "reference"), self.class_name)
        return _read(self.name, kind)

    def buggy_source(self, index: int) -> str:
        bug = self.bugs[index]
        reference = self.source("reference")
        if reference.count(bug.search) != 1:
            raise ValueError(f"{self.name} bug {index}: search text must match exactly once")
        return reference.replace(bug.search, bug.replace)

    @property
    def digest(self) -> str:
        """Fingerprint of everything a validated task depends on."""
        h = hashlib.sha256()
        for kind in ("reference", "naive", "stub"):
            h.update(self.source(kind).encode())
        for bug in self.bugs:
            h.update(f"{bug.search}\0{bug.replace}".encode())
        h.update(f"{self.size}/{self.ops}".encode())
        return h.hexdigest()[:16]


@functools.lru_cache(maxsize=128)
def _read(name: str, kind: str) -> str:
    return (DATA / name / f"{kind}.py").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=64)
def _stub_of(reference: str, class_name: str) -> str:
    """The reference's public interface with every body replaced by
    ``raise NotImplementedError`` (private helpers and imports dropped)."""
    tree = ast.parse(reference)
    body: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            body.append(node)  # module docstring
        elif isinstance(node, ast.ClassDef) and node.name == class_name:
            members: list[ast.stmt] = []
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                members.append(node.body[0])
            for item in node.body:
                if not isinstance(item, ast.FunctionDef):
                    continue
                if item.name.startswith("_") and item.name != "__init__":
                    continue
                stub_body: list[ast.stmt] = []
                if ast.get_docstring(item, clean=False) is not None:
                    stub_body.append(item.body[0])
                stub_body.append(ast.Raise(exc=ast.Name("NotImplementedError"), cause=None))
                members.append(
                    ast.FunctionDef(  # type: ignore[call-arg]
                        name=item.name,
                        args=item.args,
                        body=stub_body,
                        decorator_list=[],
                        returns=item.returns,
                        type_comment=None,
                    )
                )
            body.append(
                ast.ClassDef(  # type: ignore[call-arg]
                    name=node.name,
                    bases=[],
                    keywords=[],
                    body=members,
                    decorator_list=[],
                )
            )
    module = ast.Module(body=body, type_ignores=[])
    ast.fix_missing_locations(module)
    return ast.unparse(module) + "\n"


_CACHE_IFACE = (
    "`{cls}(capacity)`; `get(key) -> int` returns the value stored under `key` or -1; "
    "`put(key, value) -> None` stores it. Keys and values are ints."
)

STRUCTURES: dict[str, Structure] = {}


def _add(s: Structure) -> None:
    STRUCTURES[s.name] = s


_add(
    Structure(
        name="lru",
        title="LRU cache",
        module="lru_cache",
        class_name="LRUCache",
        complexity="O(1)",
        interface=_CACHE_IFACE.format(cls="LRUCache")
        + " A `put` of a new key into a full cache first evicts the least recently used "
        "entry; `get` (hit) and `put` both count as a use.",
        size=1000,
        ops=20000,
        bugs=(
            Bug(
                "        data.move_to_end(key)\n        return data[key]",
                "        return data[key]",
                "a hit does not refresh recency",
            ),
            Bug("popitem(last=False)", "popitem()", "evicts the most recently used entry"),
            Bug(
                "        elif len(data) >= self.capacity:",
                "        elif len(data) > self.capacity:",
                "holds one entry too many",
            ),
            Bug(
                "        if key in data:\n            data.move_to_end(key)\n        elif",
                "        if key in data:\n            pass\n        elif",
                "an update does not refresh recency",
            ),
        ),
    )
)


_add(
    Structure(
        name="lfu",
        title="LFU cache",
        module="lfu_cache",
        class_name="LFUCache",
        complexity="O(1)",
        interface=_CACHE_IFACE.format(cls="LFUCache")
        + " A `put` of a new key into a full cache first evicts the least frequently used "
        "entry, the least recently used among equally frequent ones; `get` (hit) and `put` "
        "each count as one use.",
        size=200,
        ops=10000,
        bugs=(
            Bug(
                "evicted, _ = bucket.popitem(last=False)",
                "evicted, _ = bucket.popitem()",
                "evicts the most recently used of the least frequent entries",
            ),
            Bug(
                "            self._values[key] = value\n            self._touch(key)\n",
                "            self._values[key] = value\n",
                "an update does not count as a use",
            ),
            Bug("        self._min = 1\n", "", "forgets that a new entry is the least frequent"),
            Bug(
                "            if self._min == count:\n                self._min = count + 1\n",
                "",
                "loses track of the least frequency",
            ),
        ),
    )
)
_add(
    Structure(
        name="ttl",
        title="TTL cache with an injected clock",
        module="ttl_cache",
        class_name="TTLCache",
        complexity="O(1) amortised",
        interface="`TTLCache(capacity, ttl, clock)`; `clock()` returns the current tick "
        "(an int). `get(key) -> int` returns the live value or -1; `put(key, value) -> None`; "
        "`size() -> int` counts live entries. An entry put at tick t is live while "
        "`clock() < t + ttl`; `get` does not extend it; a `put` on an existing key replaces "
        "the value and restarts its life. A `put` of a new key into a full cache first "
        "drops expired entries, then evicts the entry that expires first.",
        size=100,
        ops=10000,
        bugs=(
            Bug(
                "            if expiry > now:",
                "            if expiry >= now:",
                "keeps entries alive one tick too long",
            ),
            Bug(
                "        if key in data:\n            del data[key]\n",
                "        if key in data:\n            pass\n",
                "a put on an existing key does not restart its life",
            ),
            Bug(
                "        elif len(data) >= self.capacity:",
                "        elif len(data) > self.capacity:",
                "holds one entry too many",
            ),
            Bug(
                "        self._purge(self.clock())\n        return len(self._data)",
                "        return len(self._data)",
                "counts expired entries",
            ),
        ),
    )
)
_add(
    Structure(
        name="weighted_lru",
        title="weight-bounded LRU cache",
        module="weighted_lru",
        class_name="WeightedLRUCache",
        complexity="O(1) amortised",
        interface="`WeightedLRUCache(max_weight)`; `put(key, value, weight) -> None` stores "
        "the entry as the most recently used, then evicts least recently used entries "
        "until the total weight is at most `max_weight`; an entry heavier than `max_weight` "
        "is not stored (an older entry under its key is removed). `get(key) -> int` returns "
        "the value (and marks it used) or -1; `total_weight() -> int`.",
        size=80,
        ops=8000,
        bugs=(
            Bug(
                "        if weight > self.max_weight:\n            return\n",
                "",
                "stores entries heavier than the bound",
            ),
            Bug(
                "        while self._total > self.max_weight:",
                "        if self._total > self.max_weight:",
                "evicts at most one entry per put",
            ),
            Bug(
                "        if old is not None:\n            self._total -= old[1]\n",
                "",
                "counts a replaced entry's weight twice",
            ),
            Bug(
                "        self._data.move_to_end(key)\n        return entry[0]",
                "        return entry[0]",
                "a hit does not refresh recency",
            ),
        ),
    )
)
_add(
    Structure(
        name="threadsafe_lru",
        title="thread-safe LRU cache",
        module="threadsafe_lru",
        class_name="ThreadSafeLRUCache",
        complexity="O(1)",
        interface=_CACHE_IFACE.format(cls="ThreadSafeLRUCache")
        + " Least recently used eviction as in an LRU cache, and every call may come from "
        "any of several threads at once: each `get`/`put` must act atomically.",
        size=100,
        ops=10000,
        bugs=(
            Bug(
                "                data.popitem(last=False)",
                "                data.popitem()",
                "evicts the most recently used entry",
            ),
            Bug(
                "            data.move_to_end(key)\n            return data[key]",
                "            return data[key]",
                "a hit does not refresh recency",
            ),
            Bug(
                "            elif len(data) >= self.capacity:",
                "            elif len(data) > self.capacity:",
                "holds one entry too many",
            ),
            Bug(
                "            if key in data:\n                data.move_to_end(key)\n",
                "            if key in data:\n                pass\n",
                "an update does not refresh recency",
            ),
        ),
    )
)
_add(
    Structure(
        name="ring_buffer",
        title="ring buffer",
        module="ring_buffer",
        class_name="RingBuffer",
        complexity="O(1)",
        interface="`RingBuffer(capacity)` keeps the last `capacity` values, oldest first; "
        "`append(value) -> None` overwrites the oldest when full; `pop_left() -> int | None` "
        "removes the oldest; `get(index) -> int | None` returns the index-th oldest (None "
        "out of range); `size() -> int`.",
        size=1000,
        ops=20000,
        bugs=(
            Bug(
                "            self._start = (self._start + 1) % self.capacity\n        else:",
                "            pass\n        else:",
                "a full buffer does not drop its oldest value",
            ),
            Bug(
                "        if not 0 <= index < self._size:",
                "        if not 0 <= index <= self._size:",
                "reads one slot past the end",
            ),
            Bug(
                "        return self._slots[(self._start + index) % self.capacity]",
                "        return self._slots[(self._start + index) % self._size]",
                "wraps around the size instead of the capacity",
            ),
            Bug(
                "        self._size -= 1\n        return value",
                "        return value",
                "pop_left does not shrink the buffer",
            ),
        ),
    )
)
_add(
    Structure(
        name="minmax_queue",
        title="monotonic min/max queue",
        module="minmax_queue",
        class_name="MinMaxQueue",
        complexity="O(1) amortised",
        interface="`MinMaxQueue()` is a FIFO queue of ints: `push(value) -> None`, "
        "`pop() -> int | None` (front, None when empty), `min() -> int | None`, "
        "`max() -> int | None` of the elements held.",
        size=500,
        ops=20000,
        bugs=(
            Bug(
                "        if self._mins[0] == value:\n            self._mins.popleft()",
                "        self._mins.popleft()",
                "drops the minimum whenever any value leaves",
            ),
            Bug(
                "        if self._maxs[0] == value:\n            self._maxs.popleft()\n",
                "",
                "keeps popped values as the maximum",
            ),
            Bug(
                "        while maxs and maxs[-1] < value:",
                "        if maxs and maxs[-1] < value:",
                "prunes at most one smaller maximum",
            ),
            Bug(
                "        return self._mins[0] if self._mins else None",
                "        return self._mins[-1] if self._mins else None",
                "reads the wrong end",
            ),
        ),
    )
)
_add(
    Structure(
        name="sliding_median",
        title="sliding-window median",
        module="sliding_median",
        class_name="SlidingMedian",
        complexity="O(log n)",
        interface="`SlidingMedian(window)`; `add(value) -> float` appends an int and returns "
        "the median of the last `window` values added (all of them while fewer were "
        "added), as a float: the middle value, or the mean of the two middle values.",
        size=100,
        ops=6000,
        bugs=(
            Bug(
                "        if len(self._recent) > self.window:",
                "        if len(self._recent) > self.window + 1:",
                "the window is one value too long",
            ),
            Bug(
                "        return (-self._low[0] + self._high[0]) / 2",
                "        return float(self._high[0])",
                "an even window returns the upper middle value",
            ),
            Bug(
                "        if self._low_size > self._high_size + 1:",
                "        if self._low_size > self._high_size + 2:",
                "lets the halves drift out of balance",
            ),
            Bug(
                "            old = self._recent.popleft()",
                "            old = self._recent.pop()",
                "evicts the newest value instead of the oldest",
            ),
        ),
    )
)
_add(
    Structure(
        name="top_k",
        title="top-k tracker",
        module="top_k",
        class_name="TopK",
        complexity="O(log k)",
        interface="`TopK(k)`; `add(value) -> None`; `kth() -> int | None` is the k-th "
        "largest value added so far, repetitions counted (None while fewer than k); "
        "`top() -> list[int]` the up to k largest, largest first.",
        size=500,
        ops=3000,
        bugs=(
            Bug(
                "        elif value > self._heap[0]:",
                "        elif value < self._heap[0]:",
                "keeps the smallest values",
            ),
            Bug(
                "        return self._heap[0] if len(self._heap) == self.k else None",
                "        return self._heap[0] if self._heap else None",
                "answers before k values arrived",
            ),
            Bug(
                "        return sorted(self._heap, reverse=True)",
                "        return sorted(self._heap)",
                "lists the top values smallest first",
            ),
            Bug(
                "        if len(self._heap) < self.k:",
                "        if len(self._heap) < self.k - 1:",
                "keeps only k-1 values",
            ),
        ),
    )
)
_add(
    Structure(
        name="union_find",
        title="union-find (disjoint sets)",
        module="union_find",
        class_name="UnionFind",
        complexity="O(α(n)) amortised",
        interface="`UnionFind(n)` over elements 0..n-1, each alone at first; "
        "`union(a, b) -> bool` merges their sets (True if they were different); "
        "`connected(a, b) -> bool`; `size(a) -> int` of a's set; `count() -> int` sets.",
        size=250,
        ops=8000,
        bugs=(
            Bug(
                "        self._count -= 1\n        return True",
                "        return True",
                "never decreases the number of sets",
            ),
            Bug("        self._size[ra] += self._size[rb]\n", "", "never grows set sizes"),
            Bug(
                "        if ra == rb:\n            return False\n",
                "",
                "merging a set with itself counts as a merge",
            ),
            Bug(
                "        return self._size[self._find(a)]",
                "        return self._size[a]",
                "reads the size of the element, not of its set",
            ),
        ),
    )
)
_add(
    Structure(
        name="indexed_heap",
        title="decrease-key heap",
        module="indexed_heap",
        class_name="IndexedHeap",
        complexity="O(log n) amortised",
        interface="`IndexedHeap()` of int keys with int priorities: `push(key, priority) -> "
        "bool` (False if present), `decrease(key, priority) -> bool` (False if absent or "
        "not lower), `pop() -> [key, priority] | None` and `peek()` of the smallest "
        "priority (ties: smaller key), `size() -> int`.",
        size=100,
        ops=8000,
        bugs=(
            Bug(
                "        if current is None or priority >= current:",
                "        if current is None or priority > current:",
                "an equal priority counts as a decrease",
            ),
            Bug(
                "        while heap and priority.get(heap[0][1]) != heap[0][0]:",
                "        while heap and heap[0][1] not in priority:",
                "serves stale priorities",
            ),
            Bug(
                "        if key in self._priority:\n            return False\n",
                "",
                "a second push of a key overwrites it",
            ),
            Bug(
                "        return len(self._priority)",
                "        return len(self._heap)",
                "counts stale entries in the size",
            ),
        ),
    )
)
_add(
    Structure(
        name="range_sum",
        title="range-sum structure",
        module="range_sum",
        class_name="RangeSum",
        complexity="O(log n)",
        interface="`RangeSum(n)`: an array of n ints, all 0 at first; `add(index, delta) -> "
        "None`, `set(index, value) -> None`, `query(start, stop) -> int` the sum of "
        "elements start..stop-1.",
        size=500,
        ops=20000,
        bugs=(
            Bug("        while i <= n:", "        while i < n:", "never updates the last node"),
            Bug(
                "        self._values[index] = value\n        self._add(index, delta)",
                "        self._add(index, delta)",
                "set forgets the new value",
            ),
            Bug(
                "        return self._prefix(stop) - self._prefix(start)",
                "        return self._prefix(stop) - self._prefix(start + 1)",
                "drops the first element of the range",
            ),
            Bug(
                "            i += i & -i",
                "            i += 1 + (i & -i) // 2",
                "walks the wrong nodes",
            ),
        ),
    )
)
_add(
    Structure(
        name="trie",
        title="trie with prefix queries",
        module="trie",
        class_name="Trie",
        complexity="O(length of the word)",
        interface="`Trie()`, a set of lowercase words: `insert(word) -> bool` (False if "
        "present), `remove(word) -> bool` (False if absent), `contains(word) -> bool`, "
        "`count_prefix(prefix) -> int` the number of stored words starting with prefix.",
        size=200,
        ops=10000,
        bugs=(
            Bug(
                "        if self.contains(word):\n            return False\n        node = self._root",
                "        node = self._root",
                "counts a word inserted twice twice",
            ),
            Bug(
                '            if child["#"] == 0:\n                del node[ch]\n                return True\n',
                "",
                "leaves empty branches that still match",
            ),
            Bug('        del node["$"]\n', "", "a removed word is still contained"),
            Bug(
                '        return node is not None and "$" in node',
                "        return node is not None",
                "every prefix of a word counts as contained",
            ),
        ),
    )
)
_add(
    Structure(
        name="rate_limiter",
        title="token-bucket rate limiter with an injected clock",
        module="rate_limiter",
        class_name="RateLimiter",
        complexity="O(1)",
        interface="`RateLimiter(rate, burst, clock)`; `clock()` returns the current tick. "
        "Each client's bucket holds at most `burst` tokens, is full at its first call and "
        "gains `rate` tokens per tick; `allow(client, cost) -> bool` refills for the time "
        "since the client's last call, then takes `cost` tokens if there are enough; "
        "`tokens(client) -> int` refills and returns the count.",
        size=100,
        ops=10000,
        bugs=(
            Bug(
                "            bucket[0] = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)",
                "            bucket[0] = bucket[0] + (now - bucket[1]) * self.rate",
                "buckets overflow their burst size",
            ),
            Bug("            bucket[1] = now\n", "", "refills the same interval again and again"),
            Bug(
                "        if bucket[0] >= cost:",
                "        if bucket[0] > cost:",
                "refuses a request that takes the last tokens",
            ),
            Bug(
                "            bucket = self._buckets[client] = [self.burst, now]",
                "            bucket = self._buckets[client] = [0, now]",
                "new clients start empty",
            ),
        ),
    )
)


def structure(name: str) -> Structure:
    if name not in STRUCTURES:
        raise ValueError(f"structure must be one of {sorted(STRUCTURES)}, got {name!r}")
    return STRUCTURES[name]
