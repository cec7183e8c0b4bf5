"""Trusted setup hooks that jobs may name in ``SetupHook.target`` (run in the child
before the tests). Only callables inside the ``forgegym.`` package are accepted."""

from __future__ import annotations

import random

__all__ = ["seed_random"]


def seed_random(seed: int = 0) -> None:
    """Seed the ``random`` module so a run is reproducible."""
    random.seed(seed)
