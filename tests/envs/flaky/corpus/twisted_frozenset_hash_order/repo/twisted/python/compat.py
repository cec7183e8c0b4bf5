"""Compatibility names (reduced)."""

frozenset = frozenset
set = set
