"""Training telemetry over steps (:func:`plot_telemetry`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.play.plots.common import (
    _agg,
    _save,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


# ------------------------------------------------------------------------ telemetry
def telemetry_figure(rows: Sequence[Mapping[str, Any]]) -> Figure:
    """The ``forgegym/*`` telemetry over training steps (the rows
    :func:`forgegym.integrations.trl.telemetry_callback` writes: ``{"step": ...,
    "forgegym/<key>": rate}``): one panel for the cheat rate and invalid rewards, one
    for gate and hack-kind rates, and the unparseable share, each key a line."""
    if not rows:
        raise ValueError("telemetry: no rows (was the callback passed to the trainer?)")
    if not all(isinstance(r, Mapping) and "step" in r for r in rows):
        raise ValueError("telemetry: every row needs a 'step' (JSON lines of the callback)")
    plt = _agg()
    keys = sorted({k for r in rows for k in r if str(k).startswith("forgegym/")})
    panels = {
        "cheating and validity": [
            k for k in keys if k in ("forgegym/cheat_rate", "forgegym/reward_invalid")
        ],
        "gates and hacks flagged": [
            k for k in keys if k.startswith(("forgegym/gate/", "forgegym/hack/"))
        ],
        "unparseable actions": [k for k in keys if k == "forgegym/unparseable"],
    }
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 8), sharex=True, squeeze=False)
    for ax, (title, names) in zip(axes[:, 0], panels.items(), strict=True):
        for key in names:
            # A gate or hack kind no completion of a batch hit is not logged that step: 0.
            absent = 0.0 if key.startswith(("forgegym/gate/", "forgegym/hack/")) else None
            points = [
                (float(r["step"]), float(r.get(key, absent)))  # type: ignore[arg-type]
                for r in rows
                if key in r or absent is not None
            ]
            ax.plot(
                [p[0] for p in points],
                [p[1] for p in points],
                marker="o",
                markersize=3,
                label=key.removeprefix("forgegym/"),
            )
        ax.set_title(title)
        ax.set_ylabel("share of batch")
        ax.set_ylim(-0.02, 1.02)
        if names:
            ax.legend(fontsize=7, loc="upper right")
        else:
            ax.text(0.5, 0.5, "not logged", ha="center", va="center", transform=ax.transAxes)
    axes[-1, 0].set_xlabel("training step")
    fig.tight_layout()
    return fig  # type: ignore[no-any-return]


def plot_telemetry(rows: Sequence[Mapping[str, Any]], out: str | Path, dpi: int = 120) -> Path:
    """Write :func:`telemetry_figure` to ``out`` (format from its suffix)."""
    return _save(telemetry_figure(rows), out, dpi)
