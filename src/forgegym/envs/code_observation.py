"""How a code family's episode is shown to the agent (:class:`CodeObservation`, a base of
:class:`~forgegym.envs.code_env.CodeEnv`): the task with every file when that fits the
observation budget, otherwise the task, a repository map and the files that fit."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from forgegym.core.env import ForgeEnv
from forgegym.core.navigation import (
    Section,
    fit_sections,
    list_tree,
    mentioned_paths,
    render_outline,
)

if TYPE_CHECKING:
    from forgegym.sandbox.workspace import Workspace

__all__ = ["CodeObservation"]

_NAVIGATION_EXAMPLE = [
    {"action": "search", "pattern": "def parse_header"},
    {"action": "read", "path": "pkg/module.py", "start": 40, "end": 90},
]

_EXAMPLE_ACTION = [
    {
        "action": "edit",
        "edits": [{"path": "pkg/module.py", "search": "old line\n", "replace": "new line\n"}],
    },
    {"action": "run_tests"},
]


class CodeObservation(ForgeEnv):
    """The observation of a code-family episode; families override :meth:`_task_section`
    (and :meth:`_protocol_section`) to add what their task shows."""

    #: Characters every observation may hold (set by ``CodeEnv``'s ``observation_budget``).
    observation_budget: int

    if TYPE_CHECKING:

        @property
        def workspace(self) -> Workspace: ...

    def _file_label(self, path: str) -> str:
        workspace = self.workspace
        if path in set(workspace.created_files()):
            return "  (new, editable)"
        return "  (editable)" if path in workspace.editable else ""

    def _task_section(self) -> str:
        """The problem statement; families override to add symptoms, signals, ..."""
        return f"# Task: {self.task.title}\n\n{self.task.description}"

    def _protocol_section(self) -> str:
        files_note = ""
        if self.task.creatable:
            files_note = (
                "Edits may also create files ({path, content} on a new path matching "
                + ", ".join(f"`{p}`" for p in self.task.creatable)
                + "), delete them ({path, delete: true}) and move them ({path, move_to}). "
            )
        return (
            "## Actions\nReply with one JSON action, or a list of them, in a ```json block. "
            "Actions: edit {edits: [{path, search, replace} | {path, content}]}, "
            "run_tests {tests?}, lint, plan {text}, review {text}, reflect {text}, submit. "
            "A `search` must match exactly once. "
            + files_note
            + "Example:\n"
            + self.protocol_example(_EXAMPLE_ACTION)
        )

    def _render_observation(self, feedback: str | None) -> str:
        """The task with every file, when that fits ``observation_budget`` (what every
        built-in task shows); otherwise the task, a repository map and the files that
        fit (:meth:`_render_map`)."""
        whole = self._render_whole(feedback)
        if len(whole) <= self.observation_budget:
            return whole
        return self._render_map(feedback)

    def _render_whole(self, feedback: str | None) -> str:
        workspace = self.workspace
        parts = [self._task_section()]
        created = set(workspace.created_files())

        def label(path: str) -> str:
            if path in created:
                return "  (new, editable)"
            return "  (editable)" if path in workspace.editable else ""

        tree = "\n".join(f"  {path}{label(path)}" for path in sorted(workspace.current))
        tree += "".join(f"\n  {path}  (deleted)" for path in workspace.deleted_files())
        parts.append(f"## Files\n{tree}")
        for path in sorted(workspace.current):
            parts.append(f"### {path}\n```python\n{workspace.current[path]}```")
        remaining = self.max_steps - self._step_count
        parts.append(
            f"## Budget\nStep {self._step_count} of {self.max_steps}; {remaining} left. "
            + ("Your next action is graded as final." if remaining <= 1 else "")
        )
        changed = workspace.changed_files()
        if changed:
            parts.append("## Your changes so far\n```diff\n" + workspace.diff() + "```")
        if feedback:
            parts.append(f"## Result of your last action\n{feedback}")
        parts.append(self._protocol_section())
        return "\n\n".join(parts)

    def _budget_section(self) -> str:
        remaining = self.max_steps - self._step_count
        return f"## Budget\nStep {self._step_count} of {self.max_steps}; {remaining} left. " + (
            "Your next action is graded as final." if remaining <= 1 else ""
        )

    def _navigation_help(self) -> str:
        return (
            "Navigate the repository: list {path?} (a tree with sizes), read {path, start?, "
            "end?} (numbered lines), search {pattern, path?, regex?} (file:line hits). "
            "Example:\n```json\n" + json.dumps(_NAVIGATION_EXAMPLE) + "\n```"
        )

    def _focus_files(self, statement: str) -> list[str]:
        """The files the failure points at: the editable files the task statement
        names (its failing tests' frames, the bug report), the other files it names,
        then the other editable files."""
        files = self.workspace.current
        editable = self.workspace.editable
        named = mentioned_paths(statement, files)
        return list(
            dict.fromkeys(
                [
                    *(p for p in named if p in editable),
                    *named,
                    *sorted(p for p in files if p in editable),
                ]
            )
        )

    def _render_map(self, feedback: str | None) -> str:
        """An observation within ``observation_budget`` for a task too large to show
        whole: fixed parts first (step budget, protocol), then, each within a share of
        what is left, the last action's results, the task statement, the diff so far,
        the tree with sizes; then, in priority order (files the failure points at
        first), each file whole if it fits, else its outline if it is a focus file."""
        budget = self.observation_budget
        workspace = self.workspace
        files = workspace.current
        statement = self._task_section()
        diff = workspace.diff() if workspace.changed_files() else ""
        protocol = self._protocol_section() + "\n\n" + self._navigation_help()
        tree = list_tree(files, None, max_chars=budget // 3, label=self._file_label)
        tree += "".join(f"\n  {path}  (deleted)" for path in workspace.deleted_files())
        map_head = (
            f"## Repository map\nThe files exceed this observation's budget ({budget:,} "
            "characters): those that fit are shown whole, the ones the task points at are "
            "outlined (classes and functions with line numbers). `read` any file by line "
            "range, `search` for text, `list` a folder.\n"
        )
        sections = [
            Section(
                statement, 0.5, order=2, what="the task statement", how="`read` the files it names"
            ),
            Section(map_head + tree, 0.45, order=4, what="the tree", how="`list` a folder"),
            Section(self._budget_section(), None),
            Section(
                f"## Your changes so far\n```diff\n{diff}```" if diff else "",
                0.4,
                order=3,
                what="the diff",
                how="`read` the edited files",
            ),
            Section(
                f"## Result of your last action\n{feedback}" if feedback else "",
                0.75,
                order=1,
                what="the last action's results",
                how="repeat it with a smaller range",
            ),
            Section(protocol, None),
        ]
        fitted = fit_sections(sections, budget)
        left = budget - len("\n\n".join(fitted)) - 2
        focus = self._focus_files(statement)
        order = [*focus, *sorted(p for p in files if p not in focus)]
        shown: list[str] = []
        for path in order:
            block = f"### {path}\n```python\n{files[path]}```"
            if len(block) + 2 <= left:
                shown.append(block)
                left -= len(block) + 2
            elif path in focus and left > 400:
                text = render_outline(path, files[path], max_chars=min(left - 2, budget // 3))
                shown.append(text)
                left -= len(text) + 2
        parts = list(fitted)
        at = next((i + 1 for i, p in enumerate(parts) if p.startswith("## Repository map")), 1)
        parts[at:at] = shown
        return "\n\n".join(parts)
