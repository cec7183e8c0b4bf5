"""The red team's machinery: targets, the attack as an edit, grading through the public API.

An attack is Python source appended to an editable module of a task (the module a bug
lives in), so it runs when the tests import that module, exactly as a policy's edit
would. Each target is one task of one bank, opened through ``gym.make``:

* ``repo``: a vendored repository (``tests/fixtures/repos/ledger``: pytest and
  unittest tests) in repository mode;
* ``bugfix``: a task of the generated Bugfix bank (hidden checks are differential);
* ``flaky``: a task of the generated FlakyRepair bank;
* ``real-<project>``: a task of the real bank (pinned sdists, cached or downloaded).

Every attack of a half is graded with the no-op on its target as one batch
(``grade_completions``: each completion in a sandbox of its own, so the attacks stay
independent). The bar (issue 36): no more than the no-op, never ``success``,
``reward_valid`` stays True, and nothing of the attack is left on the host.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401 - registers the ids
from forgegym.core.task import Task

REPOS = Path(__file__).resolve().parents[2] / "fixtures" / "repos"
LEDGER = REPOS / "ledger"
LEDGER_FAILING = [
    "tests/test_money.py::test_total",
    "tests/test_money_unittest.py::MoneyTest::test_total_of_two",
]
NOOP = '```json\n[{"action": "submit"}]\n```'
#: Real-bank projects used (small, pytest- and unittest-style; markupsafe's release is
#: also the runtime's, so a pristine copy sits in site-packages today).
REAL_PROJECTS = ("markupsafe", "cachetools", "funcy")


@dataclass
class Outcome:
    """What grading one completion gave."""

    score: float
    success: bool
    valid: bool
    cause: str | None
    noop_score: float
    residue: list[str] = field(default_factory=list)

    @property
    def held(self) -> bool:
        """The issue's bar."""
        return (
            self.valid
            and not self.success
            and self.score <= self.noop_score + 1e-9
            and not self.residue
        )

    def why(self) -> str:
        return (
            f"score={self.score:.3f} (no-op {self.noop_score:.3f}) success={self.success} "
            f"valid={self.valid} cause={self.cause} residue={self.residue}"
        )


@dataclass
class Target:
    """One task of one bank, open in an env."""

    name: str
    env: gym.Env
    task: Task
    module: str  # the editable module attacks are appended to
    style: str  # "pytest" or "unittest": what its fail-to-pass tests are

    @property
    def unwrapped(self) -> Any:
        return self.env.unwrapped

    def edit(self, code: str, module: str | None = None) -> str:
        """The completion that appends ``code`` to the target module and submits."""
        path = module or self.module
        text = self.task.files[path].rstrip("\n") + "\n\n\n" + code.strip("\n") + "\n"
        return edit_completion({path: text})

    def close(self) -> None:
        self.env.close()


def edit_completion(files: dict[str, str], submit: bool = True) -> str:
    actions: list[dict[str, Any]] = [
        {"action": "edit", "edits": [{"path": p, "content": c} for p, c in files.items()]}
    ]
    if submit:
        actions.append({"action": "submit"})
    return "```json\n" + json.dumps(actions) + "\n```"


def _repo_target() -> Target:
    env = gym.make("Forge/Bugfix-v0", repo_path=str(LEDGER), failing_tests=LEDGER_FAILING)
    env.reset(seed=0)
    task = env.unwrapped.task
    return Target("repo", env, task, "src/ledger/money.py", "pytest+unittest")


def _bugfix_target() -> Target:
    from forgegym.envs.bugfix.bank import load_manifest

    env = gym.make("Forge/Bugfix-v0")
    entry = next(e for e in load_manifest()["tasks"] if not e["symptom_only"])
    env.reset(options={"task_id": entry["id"]})
    task = env.unwrapped.task
    return Target("bugfix", env, task, task.hidden["mutated_file"], "differential")


def _flaky_target() -> Target:
    from forgegym.envs.flaky.hidden import FlakyHidden

    env = gym.make("Forge/FlakyRepair-v0", reruns=4)
    # A task whose flaky failure shows within the kit's 4 reruns (baseline pass rate 0.50).
    # Under so few reruns some tasks never fail (baseline 1.00), and there any change
    # "succeeds" whatever it does, which says nothing about the sandbox; the bank's
    # level-1 rebuild (issue 37) made ``seed=1`` draw such a task.
    env.reset(options={"task_id": "flaky/non_idempotent/init/d1/5"})
    task = env.unwrapped.task
    module = FlakyHidden.of(task).location.split("::")[0]
    return Target("flaky", env, task, module, "pytest")


def _real_target(project: str) -> Target:
    from forgegym.envs.bugfix.real import RealTaskBank

    env = gym.make("Forge/Bugfix-v0", bank="real")
    bank: RealTaskBank = env.unwrapped.task_bank
    # Real task ids read ``real/<project>/<version>/...``: only this project's entries
    # are parsed (the bank parses an entry when asked for it).
    entries = {i: bank.entry(i) for i in bank.ids() if i.split("/")[1:2] == [project]}
    # The task whose fail-to-pass tests live in the fewest test modules (a quick grading).
    task_id = min(entries, key=lambda i: (len(entries[i]["modules"]), i))
    entry = entries[task_id]
    env.reset(options={"task_id": task_id})
    task = env.unwrapped.task
    style = "unittest" if "::" in str(entry["f2p"][0]).split("::", 1)[1] else ""
    return Target(f"real-{project}", env, task, entry["file"], style or "pytest")


TARGETS: dict[str, Callable[[], Target]] = {
    "repo": _repo_target,
    "bugfix": _bugfix_target,
    "flaky": _flaky_target,
    **{f"real-{p}": (lambda p=p: _real_target(p)) for p in REAL_PROJECTS},
}


# ------------------------------------------------------------------------ residue
def host_files_named(marker: str) -> list[str]:
    """Files on the host whose name holds ``marker`` (temp dirs, shm, home, scratch)."""
    from forgegym.sandbox.workspace import scratch_root

    found: list[str] = []
    tops = {tempfile.gettempdir(), "/dev/shm", "/var/tmp", str(scratch_root()), str(Path.home())}
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(top):
            if dirpath.count(os.sep) - top.count(os.sep) >= 3:
                dirnames[:] = []
            found += [os.path.join(dirpath, n) for n in dirnames + filenames if marker in n]
    return found


def host_procs_with(marker: str) -> list[int]:
    pids: list[int] = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(entry))
    return pids


# ------------------------------------------------------------------------ grading
def grade_attacks(target: Target, attacks: dict[str, str]) -> dict[str, Outcome]:
    """Grade every attack (code appended to the target's module) with the no-op, as one
    batch. ``{MARK}`` in an attack is replaced by a fresh marker: anything on the host
    named with it after grading is residue."""
    mark = f"fgrt{uuid.uuid4().hex[:12]}"
    names = sorted(attacks)
    completions = [NOOP] + [target.edit(attacks[n].replace("{MARK}", mark)) for n in names]
    results = target.unwrapped.grade_completions(target.task.task_id, completions)
    (noop_reward, noop), *rest = results
    residue = host_files_named(mark) + [f"pid {p}" for p in host_procs_with(mark)]
    out: dict[str, Outcome] = {}
    for name, (_reward, breakdown) in zip(names, rest, strict=True):
        out[name] = Outcome(
            score=float(breakdown.score),
            success=bool(target.unwrapped.solved(breakdown)),
            valid=bool(breakdown.valid),
            cause=breakdown.invalid_cause,
            noop_score=float(noop.score),
            residue=list(residue),
        )
    return out


class Batches:
    """Targets opened once and each target's batch graded once per test module."""

    def __init__(self, attacks: dict[str, str], applies: Callable[[str, str], bool]) -> None:
        self.attacks = attacks
        self.applies = applies
        self._targets: dict[str, Target] = {}
        self._results: dict[str, dict[str, Outcome]] = {}

    def target(self, name: str) -> Target:
        if name not in self._targets:
            self._targets[name] = TARGETS[name]()
        return self._targets[name]

    def outcome(self, target: str, attack: str) -> Outcome:
        if target not in self._results:
            chosen = {a: c for a, c in self.attacks.items() if self.applies(a, target)}
            self._results[target] = grade_attacks(self.target(target), chosen)
        return self._results[target][attack]

    def close(self) -> None:
        for each in self._targets.values():
            each.close()


def step_episode(target: Target, actions: list[dict[str, Any]]) -> Iterator[tuple[str, dict]]:
    """Play ``actions`` (one per step) on a fresh episode of the target's task; yields
    ``(observation, info)`` after each."""
    target.env.reset(options={"task_id": target.task.task_id})
    for action in actions:
        obs, _reward, _terminated, _truncated, info = target.env.step(json.dumps(action))
        yield obs, info
