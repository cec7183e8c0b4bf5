"""Text spaces for forgegym observations and actions.

Gymnasium's :class:`~gymnasium.spaces.Text` defaults to an alphanumeric charset and
``min_length=1``, which rejects source code, JSON and the empty string. Our spaces
subclass it (so Gymnasium's vector utilities still dispatch on ``Text``) but accept
any Python ``str`` up to ``max_length``.

Shared-memory text handlers
---------------------------
Why this module exists
----------------------
``gymnasium.vector.AsyncVectorEnv`` defaults to ``shared_memory=True``: workers write
each observation into a shared buffer and the parent reads it back. Gymnasium's
handlers for :class:`~gymnasium.spaces.Text` cannot carry our observations:

* the parent's view is decoded *once*, when the vector env is built, so every
  ``reset``/``step`` returns the same placeholder strings;
* the buffer holds character-set indices, so characters outside the space's charset
  (any code, any Unicode) would be lost anyway.

Importing this module (every env does) registers handlers for
:class:`~forgegym.core.spaces.UnicodeText` with Gymnasium's ``singledispatch``
functions ``create_shared_memory`` / ``read_from_shared_memory`` /
``write_to_shared_memory``. So ``gymnasium.make_vec(id, vectorization_mode="async")``
and a hand-built ``AsyncVectorEnv([...])`` both return the real prompts, with the
default ``shared_memory=True``, and ``shared_memory=False`` keeps working too.

We chose this over a ``vector_entry_point`` that forces ``shared_memory=False``
because (1) it fixes the space wherever it is used, not only through ``make_vec``;
(2) it leaves ``make_vec``'s default (sync) mode, ``wrappers=`` and the user's
``vector_kwargs`` untouched (a spec-level ``vector_kwargs`` would override the user's);
and (3) Gymnasium 1.4's async worker only clears its next-step autoreset flag on an
explicit ``reset()`` when shared memory is on, so ``shared_memory=False`` mishandles
"episode ended, caller reset explicitly, then stepped".

Buffer layout: per environment, an 8-byte length followed by ``4 * max_length``
bytes of UTF-8 (``surrogatepass``, so every Python ``str`` round-trips). That is the
worst case for ``max_length`` code points, the same size Gymnasium's own ``Text``
buffer has (int32 per character): about 4 MiB per environment for the default
1 MiB observation limit. Environments with smaller prompts can pass a smaller
``max_observation_chars``. Only the bytes actually written are decoded on read.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import string
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any, overload

import numpy as np
from gymnasium.spaces import Text
from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

__all__ = ["PRINTABLE_CHARSET", "SharedTextBatch", "UnicodeText", "slot_bytes"]

#: Characters used by :meth:`UnicodeText.sample`: printable ASCII, so samples are
#: readable in logs, plus a few non-ASCII letters to exercise Unicode handling.
PRINTABLE_CHARSET: str = string.printable + "éßλ中→"


class UnicodeText(Text):
    """A :class:`~gymnasium.spaces.Text` space that contains every ``str`` up to ``max_length``.

    ``contains`` accepts any Unicode string (the empty string included) whose length
    is at most ``max_length``; ``sample`` yields printable text.

    Example:
        >>> space = UnicodeText(max_length=100)
        >>> space.contains('```json\\n{"action": "submit"}\\n```')
        True
        >>> space.contains("")
        True
        >>> space.contains(b"bytes")
        False
    """

    def __init__(self, max_length: int = 262_144, *, seed: int | np.random.Generator | None = None):
        super().__init__(max_length=max_length, min_length=0, charset=PRINTABLE_CHARSET, seed=seed)

    def sample(
        self,
        mask: tuple[int | None, np.ndarray | None] | None = None,
        probability: tuple[int | None, np.ndarray | None] | None = None,
    ) -> str:
        """Sample printable text; without a mask the length is capped at 512 characters.

        Uniform lengths up to a 256 KiB ``max_length`` would make every random-policy
        step carry megabytes of noise, which helps nobody.
        """
        if mask is None and probability is None:
            length = int(self.np_random.integers(0, min(self.max_length, 512) + 1))
            return super().sample(mask=(length, None))
        return super().sample(mask=mask, probability=probability)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, UnicodeText) and other.max_length == self.max_length

    def __hash__(self) -> int:
        return hash(("UnicodeText", self.max_length))


# ------------------------------------------------- shared-memory text handlers
_HEADER = 8  # int64 byte length of the encoded string in the slot
_ENCODING = "utf-8"
_ERRORS = "surrogatepass"  # lone surrogates are legal in a str; keep them


def slot_bytes(space: UnicodeText) -> int:
    """Bytes one environment's slot needs: the length header plus worst-case UTF-8."""
    return _HEADER + 4 * space.max_length


class SharedTextBatch(Sequence[str]):
    """A live, read-only view of ``n`` strings in a shared buffer.

    ``AsyncVectorEnv`` returns ``deepcopy(self.observations)`` (its default
    ``copy=True``); our ``__deepcopy__`` decodes the current contents into a plain
    ``tuple[str, ...]`` — the same type ``SyncVectorEnv`` returns for text spaces. With
    ``copy=False`` the caller gets this view itself, which (like a NumPy view of a Box
    buffer) reflects later steps.
    """

    def __init__(self, buffer: Any, n: int, slot: int) -> None:
        self._buffer = buffer
        self._n = n
        self._slot = slot

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self._decode(i) for i in range(self._n)[index])
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(f"index {index} out of range for {self._n} environments")
        return self._decode(index)

    def __iter__(self) -> Iterator[str]:
        return (self._decode(i) for i in range(self._n))

    def _decode(self, index: int) -> str:
        view = memoryview(self._buffer).cast("B")
        start = index * self._slot
        length = int.from_bytes(view[start : start + _HEADER], "little")
        body = view[start + _HEADER : start + _HEADER + length]
        return bytes(body).decode(_ENCODING, _ERRORS)

    def to_tuple(self) -> tuple[str, ...]:
        """The current strings as a tuple."""
        return tuple(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return self.to_tuple()

    def __copy__(self) -> tuple[str, ...]:
        return self.to_tuple()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return self.to_tuple() == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable view

    def __repr__(self) -> str:
        return f"SharedTextBatch({self.to_tuple()!r})"


@create_shared_memory.register(UnicodeText)
def _create_unicode_text_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = mp) -> Any:
    # A raw array: the parent only reads after the worker answered on its pipe, which
    # already orders the accesses, so a lock would only cost time.
    return ctx.RawArray(ctypes.c_uint8, n * slot_bytes(space))


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_text_from_shared_memory(
    space: UnicodeText, shared_memory: Any, n: int = 1
) -> SharedTextBatch:
    return SharedTextBatch(shared_memory, n, slot_bytes(space))


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_text_to_shared_memory(
    space: UnicodeText, index: int, value: str, shared_memory: Any
) -> None:
    slot = slot_bytes(space)
    data = str(value).encode(_ENCODING, _ERRORS)
    if len(data) > slot - _HEADER:
        # Only reachable if an env breaks its own observation_space contract.
        raise ValueError(
            f"observation of {len(value)} characters exceeds the space's "
            f"max_length={space.max_length}"
        )
    view = memoryview(shared_memory).cast("B")
    start = index * slot
    view[start + _HEADER : start + _HEADER + len(data)] = data
    view[start : start + _HEADER] = len(data).to_bytes(_HEADER, "little")
