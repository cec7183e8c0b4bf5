from __future__ import annotations

import gymnasium as gym

from forgegym.core.spaces import UnicodeText


def test_contains_code_unicode_and_empty_strings() -> None:
    space = UnicodeText(max_length=64)
    assert space.contains("")
    assert space.contains('```json\n{"action": "submit"}\n```')
    assert space.contains("λ → 中")
    assert not space.contains("x" * 65)
    assert not space.contains(b"bytes")
    assert not space.contains(None)


def test_is_a_gymnasium_text_space_so_vector_utilities_dispatch() -> None:
    assert isinstance(UnicodeText(), gym.spaces.Text)


def test_samples_are_contained_and_seeded() -> None:
    a, b = UnicodeText(max_length=1000, seed=3), UnicodeText(max_length=1000, seed=3)
    samples = [a.sample() for _ in range(20)]
    assert samples == [b.sample() for _ in range(20)]
    assert all(a.contains(s) and len(s) <= 512 for s in samples)
