"""Make the toy family of tests/curricula importable here too."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "curricula"))
