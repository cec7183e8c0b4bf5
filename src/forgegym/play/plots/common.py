"""What every plot shares: the figure sizes, the input checks (a file of another kind is
refused saying what it is), the headless backend, the writer whose suffix picks the
format, and small text and axis helpers."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.play.results import Results, describe

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


#: Figure sizes in inches; at the default ``dpi=100`` the PNGs are 1200x900, 1200x900
#: and 1000x500 pixels.
EPISODE_FIGSIZE: tuple[float, float] = (12.0, 9.0)
CURRICULUM_FIGSIZE: tuple[float, float] = (12.0, 9.0)
SCORES_FIGSIZE: tuple[float, float] = (10.0, 5.0)

#: The ``format`` of a curriculum state file (:mod:`forgegym.curricula`).
CURRICULUM_FORMAT = "forgegym.curriculum/1"


# ---------------------------------------------------------------- input checks
def _read_json(source: Any) -> Any:
    if isinstance(source, (str, Path)):
        return json.loads(Path(source).read_text(encoding="utf-8"))
    return source


def _what_it_is(data: Any) -> str:
    """What a wrong input looks like, and which plot reads it."""
    return describe(data)


def _as_results(source: Any) -> Results:
    """A :class:`Results` from a path, dict, model or list of episodes (old formats
    migrated, see :mod:`forgegym.play.results`).

    Raises ``ValueError`` for anything else (a curriculum state, a learning report, a
    results file with missing or ill-typed fields), saying what the input is.
    """
    return Results.from_data(_read_json(source))


def _as_state(source: Any) -> Mapping[str, Any]:
    state = _read_json(source)
    if not isinstance(state, Mapping) or state.get("format") != CURRICULUM_FORMAT:
        raise ValueError(
            f"state: expected a curriculum state (format {CURRICULUM_FORMAT!r}, written by "
            f"CurriculumScheduler.save), got {_what_it_is(state)}"
        )
    return state


# ---------------------------------------------------------------- output
def output_formats() -> dict[str, str]:
    """The file suffixes the plots can write (``{"png": "Portable Network Graphics",
    ...}``): what matplotlib's non-interactive canvas supports."""
    from matplotlib.backend_bases import FigureCanvasBase

    return dict(FigureCanvasBase.get_supported_filetypes())


def _agg() -> Any:
    import matplotlib

    # Why: a headless default; notebooks that chose a backend keep it (inline is Agg-based).
    if "inline" not in matplotlib.get_backend().lower():
        matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Figure, out: str | Path, dpi: int) -> Path:
    """Write ``fig`` in the format the suffix of ``out`` names, then close it."""
    import matplotlib.pyplot as plt

    path = Path(out)
    fmt = path.suffix.lower().lstrip(".")
    formats = output_formats()
    if fmt not in formats:
        plt.close(fig)
        raise ValueError(
            f"out: the suffix names the format; {path.name!r} has "
            f"{'suffix ' + repr(path.suffix) if path.suffix else 'none'}, use one of "
            + ", ".join(f".{f}" for f in sorted(formats))
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fig.savefig(path, dpi=dpi, format=fmt)
    finally:
        plt.close(fig)
    return path


def _wrap(text: str, width: int, lines: int = 2) -> str:
    """``text`` wrapped to ``width`` characters, at most ``lines`` lines (ends in "…")."""
    wrapped = textwrap.wrap(text, width, break_on_hyphens=False) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: width - 1].rstrip() + "…"
    return "\n".join(wrapped)


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _integer_axis(axis: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    # min_n_ticks=1: integers even when the range holds only one (episodes of one step).
    axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


def _empty(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])
