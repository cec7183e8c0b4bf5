"""The shared reward module every family composes.

* :mod:`~forgegym.rewards.breakdown`: named terms, gates and :func:`compose`.
* :mod:`~forgegym.rewards.outcome`: pass rates, potential-based shaping, regressions.
* :mod:`~forgegym.rewards.calibration`: the Brier rule for stated confidences.
* :mod:`~forgegym.rewards.text`: ROUGE-L via ``rouge-score``.
* :mod:`~forgegym.rewards.lint`: ruff findings and a lint credit.
* :mod:`~forgegym.rewards.diff`: diff statistics, a size credit, no-op detection.
* :mod:`~forgegym.rewards.antihack`: static scans for weakened tests and other hacks.
"""

from forgegym.rewards.antihack import (
    HACK_KINDS,
    SCANNERS,
    SOURCE_SCANNERS,
    TAMPERING_FILENAMES,
    TEST_SCANNERS,
    HackFinding,
    scan_added_files,
    scan_patch,
    scan_source,
    scan_test_changes,
)
from forgegym.rewards.breakdown import (
    COMPILE_ERROR_TOTAL,
    DEFAULT_TERM_KINDS,
    GATE_TOTALS,
    HACK_TOTAL,
    UNGATED_FLOOR,
    RewardBreakdown,
    RewardTerm,
    TermKind,
    compose,
    merge_weights,
    validate_weights,
    with_step_terms,
)
from forgegym.rewards.calibration import brier_reward, expected_brier_reward
from forgegym.rewards.diff import DiffStats, diff_size_score, diff_stats, is_noop
from forgegym.rewards.lint import (
    DEFAULT_SELECT,
    SEVERE_PREFIXES,
    LintError,
    LintFinding,
    lint_files,
    lint_score,
    lint_sources,
    new_findings,
)
from forgegym.rewards.outcome import pass_rate, potential, regression, shaping
from forgegym.rewards.text import rouge_l

__all__ = [
    "COMPILE_ERROR_TOTAL",
    "DEFAULT_SELECT",
    "DEFAULT_TERM_KINDS",
    "GATE_TOTALS",
    "HACK_KINDS",
    "HACK_TOTAL",
    "SCANNERS",
    "SEVERE_PREFIXES",
    "SOURCE_SCANNERS",
    "TAMPERING_FILENAMES",
    "TEST_SCANNERS",
    "UNGATED_FLOOR",
    "DiffStats",
    "HackFinding",
    "LintError",
    "LintFinding",
    "RewardBreakdown",
    "RewardTerm",
    "TermKind",
    "brier_reward",
    "compose",
    "diff_size_score",
    "diff_stats",
    "expected_brier_reward",
    "is_noop",
    "lint_files",
    "lint_score",
    "lint_sources",
    "merge_weights",
    "new_findings",
    "pass_rate",
    "potential",
    "regression",
    "rouge_l",
    "scan_added_files",
    "scan_patch",
    "scan_source",
    "scan_test_changes",
    "shaping",
    "validate_weights",
    "with_step_terms",
]
