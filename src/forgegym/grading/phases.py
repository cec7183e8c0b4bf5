"""Where grading time goes: :mod:`forgegym.rewards.phases`, re-exported.

The timing marker imports nothing of forgegym, and its lowest user is ``rewards.lint``
(ruff runs marked ``lint``), so it lives in ``rewards``, the lowest layer that uses it
(docs/design/001: a module may be imported only from its own layer and those above).
Grading code keeps importing it from here."""

from __future__ import annotations

from forgegym.rewards.phases import PhaseRecorder, add, phase, recording

__all__ = ["PhaseRecorder", "add", "phase", "recording"]
