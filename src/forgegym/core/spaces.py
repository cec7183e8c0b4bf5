"""Text spaces for forgegym observations and actions.

Gymnasium's :class:`~gymnasium.spaces.Text` defaults to an alphanumeric charset and
``min_length=1``, which rejects source code, JSON and the empty string. Our spaces
subclass it (so Gymnasium's vector utilities still dispatch on ``Text``) but accept
any Python ``str`` up to ``max_length``.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium.spaces import Text

__all__ = ["UnicodeText", "PRINTABLE_CHARSET"]

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
