"""The ``navigate`` policy: a scripted baseline that finds what to change by navigating.

It plays ``list`` -> ``search`` -> ``read`` -> ``edit`` -> ``run_tests`` -> ``submit``
through the public action models, one phase per step, on any code family (the
families whose action set has ``search`` and ``read``). It knows the fix the way the
``reference`` policy does (the family's reference action, turned into hunks: the old
lines and their replacement), but not where the fix goes: it searches the workspace
for a distinctive line of each hunk, reads the line ranges around the hits, and builds
each edit from the text it read (path and ``search`` text included). So it can only
succeed when ``list``/``search``/``read`` report the repository faithfully, and it
never receives more than one observation (within ``observation_budget``) per step.

It is stateless: each step's action depends only on the task, the step number and
the observation (the previous step's results), so one instance plays any number of
episodes, in any order, in a vector env too.

With fewer steps than phases it drops ``list`` and then ``run_tests``, and submits
with the edit; with ``max_steps <= 2`` there is no room to navigate and it plays the
reference action. A hunk it cannot locate from what it read (a read cut by the
budget) falls back to the reference's own text; :attr:`NavigatePolicy.fallbacks`
counts them.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from forgegym.core.actions import ActionModel, EditAction, SubmitAction
from forgegym.core.env import ForgeEnv
from forgegym.core.navigation import MAX_PATTERN_CHARS
from forgegym.core.task import Task

__all__ = ["NavigatePolicy", "supports_navigation"]

_RESULT = "## Result of your last action\n"
_HIT = re.compile(r"^(?P<path>.+?):(?P<line>\d+): ", re.MULTILINE)
_READ_HEAD = re.compile(r"^(?P<path>\S.*?) lines (?P<first>\d+)-(?P<last>\d+) of \d+:$")
_ROW = re.compile(r"^ *(?P<number>\d+)\t(?P<text>.*)$")
#: Most ``read`` actions one step asks for (the action set takes at most 16 per step).
_MAX_READS = 12
_CONTEXT = 2


@dataclass(frozen=True)
class Hunk:
    """One change: ``old`` (whole lines, unique in the original file) becomes ``new``;
    ``anchor`` is the line searched for, ``offset`` its index among ``old``'s lines."""

    path: str
    old: str
    new: str
    anchor: str
    offset: int

    @property
    def lines(self) -> int:
        return self.old.count("\n") or 1


@dataclass
class _Plan:
    """What the reference action does, as navigable hunks and the rest."""

    hunks: list[Hunk] = field(default_factory=list)
    #: The reference's edits in order: a hunk index, or an edit passed through as is
    #: (creating, deleting or moving a file).
    order: list[int | dict[str, Any]] = field(default_factory=list)
    edit_extra: dict[str, Any] = field(default_factory=dict)
    submit: dict[str, Any] = field(default_factory=lambda: {"action": "submit"})
    reference: str = ""


def supports_navigation(env: ForgeEnv) -> bool:
    """Whether ``env``'s action set has the navigation actions this policy plays."""
    return {"list", "read", "search", "edit", "submit"} <= set(env.action_set.names)


def _dump(action: ActionModel) -> dict[str, Any]:
    return action.model_dump(mode="json", exclude_none=True, exclude_defaults=True) | {
        "action": action.action  # type: ignore[attr-defined]
    }


def _hunks(path: str, before: str, after: str) -> list[Hunk]:
    """The changes from ``before`` to ``after`` as hunks whose old text is unique in
    ``before`` (context lines added until it is) and has a non-blank line."""
    a = before.splitlines(keepends=True)
    b = after.splitlines(keepends=True)
    regions: list[list[int]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if regions and i1 - regions[-1][1] <= 2 * _CONTEXT:
            regions[-1][1], regions[-1][3] = i2, j2  # near the previous change: one hunk
        else:
            regions.append([i1, i2, j1, j2])
    hunks: list[Hunk] = []
    for index, (i1, i2, j1, j2) in enumerate(regions):
        low = regions[index - 1][1] if index else 0
        high = regions[index + 1][0] if index + 1 < len(regions) else len(a)
        grow = 0
        while True:
            s, e = max(i1 - grow, low), min(i2 + grow, high)
            old = "".join(a[s:e])
            unique = old.strip() and before.count(old) == 1
            if unique or (s == low and e == high):
                break
            grow += 1
        new = "".join(a[s:i1]) + "".join(b[j1:j2]) + "".join(a[i2:e])
        rows = old.splitlines()
        changed = range(i1 - s, i1 - s + max(i2 - i1, 0))
        candidates = [k for k in changed if rows[k].strip()] or [
            k for k in range(len(rows)) if rows[k].strip()
        ]
        if not candidates:
            continue  # only blank lines around: nothing to search for (the reference edits it)
        offset = max(candidates, key=lambda k: len(rows[k].strip()))
        anchor = rows[offset].strip()[:MAX_PATTERN_CHARS]
        hunks.append(Hunk(path=path, old=old, new=new, anchor=anchor, offset=offset))
    return hunks


def _feedback(observation: str) -> str:
    """The previous step's results in ``observation`` (empty before the first step)."""
    start = observation.rfind(_RESULT)
    if start < 0:
        return ""
    body = observation[start + len(_RESULT) :]
    end = body.rfind("\n\n## Actions\n")
    return body if end < 0 else body[:end]


def _search_hits(feedback: str) -> list[list[tuple[str, int]]]:
    """The hits of each ``search`` result in ``feedback``, in order."""
    blocks: list[list[tuple[str, int]]] = []
    for line in feedback.splitlines():
        if line.startswith("search "):
            blocks.append([])
        elif blocks:
            hit = _HIT.match(line)
            if hit:
                blocks[-1].append((hit["path"], int(hit["line"])))
    return blocks


def _read_ranges(feedback: str) -> list[tuple[str, int, list[str]]]:
    """Each ``read`` result in ``feedback``: its path, first line and the lines shown."""
    ranges: list[tuple[str, int, list[str]]] = []
    current: tuple[str, int, list[str]] | None = None
    for line in feedback.split("\n"):
        head = _READ_HEAD.match(line)
        if head:
            current = (head["path"], int(head["first"]), [])
            ranges.append(current)
            continue
        row = _ROW.match(line)
        if current is not None and row and int(row["number"]) == current[1] + len(current[2]):
            current[2].append(row["text"])
        else:
            current = None if not row else current
    return ranges


class NavigatePolicy:
    """The ``navigate`` policy for ``env`` (see the module docstring)."""

    def __init__(self, env: ForgeEnv, reference: Callable[[Task], str] | None = None) -> None:
        """``reference``: the fix to find, as an action text for a task (default: the
        family's reference action); e.g. the known fix of your own repository's bug,
        which the family cannot know."""
        from forgegym.policies.registry import reference_action_for

        if not supports_navigation(env):
            raise ValueError(
                f"name: policy 'navigate' needs list/read/search actions; family "
                f"{env.family!r} has {list(env.action_set.names)}"
            )
        self._env = env
        self._reference = reference if reference is not None else reference_action_for(env.family)
        self._plans: dict[str, _Plan] = {}
        #: Hunks whose location the policy could not read and took from the reference.
        self.fallbacks = 0

    # ------------------------------------------------------------------ plan
    def _plan(self, task: Task) -> _Plan:
        cached = self._plans.get(task.task_id)
        if cached is not None:
            return cached
        reference = self._reference(task)
        plan = _Plan(reference=reference)
        parsed = self._env.action_set.parse(reference)
        for action in parsed.actions:
            if isinstance(action, EditAction):
                dumped = _dump(action)
                dumped.pop("edits", None)
                dumped.pop("action", None)
                plan.edit_extra.update(dumped)
                for spec in action.edits:
                    before = task.files.get(spec.path)
                    if before is not None and spec.search is not None:
                        assert spec.replace is not None
                        full = before.replace(spec.search, spec.replace, 1)
                        hunks = _hunks(spec.path, before, full)
                    elif before is not None and spec.content is not None:
                        hunks = _hunks(spec.path, before, spec.content)
                    else:
                        plan.order.append(spec.model_dump(exclude_none=True, exclude_defaults=True))
                        continue
                    for hunk in hunks:
                        plan.order.append(len(plan.hunks))
                        plan.hunks.append(hunk)
            elif isinstance(action, SubmitAction):
                plan.submit = _dump(action)
                break
        if len(self._plans) >= 256:
            self._plans.pop(next(iter(self._plans)))
        self._plans[task.task_id] = plan
        return plan

    @staticmethod
    def _phases(max_steps: int) -> list[str]:
        phases = ["list", "search", "read", "edit", "run_tests", "submit"]
        if max_steps < 6:
            phases.remove("list")
        if max_steps < 5:
            phases.remove("run_tests")
        if max_steps < 4:
            phases[-2:] = ["edit+submit"]
        return phases

    # ------------------------------------------------------------------ play
    def __call__(self, observation: str, info: Mapping[str, Any]) -> str:
        task = self._env.task_bank.get(str(info["task_id"]))
        plan = self._plan(task)
        max_steps = int(info.get("max_steps") or self._env.max_steps)
        if max_steps <= 2 or not plan.hunks:
            return plan.reference
        phases = self._phases(max_steps)
        step = int(info.get("step") or 0)
        phase = phases[min(step, len(phases) - 1)]
        feedback = _feedback(observation)
        actions: list[dict[str, Any]]
        if phase == "list":
            actions = [{"action": "list"}]
        elif phase == "search":
            actions = [{"action": "search", "pattern": h.anchor} for h in plan.hunks][:16]
        elif phase == "read":
            actions = self._reads(plan, feedback)
        elif phase in ("edit", "edit+submit"):
            actions = [self._edit(plan, feedback)]
            if phase == "edit+submit":
                actions.append(plan.submit)
        elif phase == "run_tests":
            actions = [{"action": "run_tests"}]
        else:
            actions = [plan.submit]
        # Bare JSON (the parser's whole-text path): no fence for file text to collide with.
        return json.dumps(actions if len(actions) > 1 else actions[0])

    def _reads(self, plan: _Plan, feedback: str) -> list[dict[str, Any]]:
        """Read around each hunk's hits (as many candidates as the step allows)."""
        blocks = _search_hits(feedback)
        per_hunk = max(1, _MAX_READS // max(len(plan.hunks), 1))
        reads: list[dict[str, Any]] = []
        for index, hunk in enumerate(plan.hunks):
            hits = blocks[index] if index < len(blocks) else []
            for path, line in hits[:per_hunk]:
                start = max(1, line - hunk.offset - 1)
                reads.append(
                    {"action": "read", "path": path, "start": start, "end": start + hunk.lines + 1}
                )
        return reads[:16] or [{"action": "list"}]

    def _edit(self, plan: _Plan, feedback: str) -> dict[str, Any]:
        """One edit built from the text read: each hunk's old lines, found in a read
        range, with the path that range came from."""
        read = [
            (path, "".join(line + "\n" for line in lines))
            for path, _, lines in _read_ranges(feedback)
        ]
        edits: list[dict[str, Any]] = []
        for item in plan.order:
            if isinstance(item, dict):
                edits.append(item)
                continue
            hunk = plan.hunks[item]
            located = next((path for path, text in read if hunk.old in text), None)
            if located is None:
                self.fallbacks += 1
                located = hunk.path
            edits.append({"path": located, "search": hunk.old, "replace": hunk.new})
        return {"action": "edit", "edits": edits, **plan.edit_extra}
