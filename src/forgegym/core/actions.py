"""Text to typed actions.

An action is text. :func:`parse_actions` takes a fenced ```json block if there is one,
else the whole text, else the last balanced JSON value in it, so free-form reasoning
may precede the action. The JSON is one action object or a list of them. Every action
is a pydantic v2 model discriminated on its ``action`` field.

Parse errors are returned as values (:class:`ParseResult.error`), never raised: the
environment turns them into a format penalty and shows the message to the policy.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

__all__ = [
    "ActionModel",
    "ActionSet",
    "EditAction",
    "EditSpec",
    "LintAction",
    "ListAction",
    "NAVIGATION_ACTIONS",
    "ParseResult",
    "PlanAction",
    "ReadAction",
    "ReflectAction",
    "ReviewAction",
    "RunTestsAction",
    "SearchAction",
    "SubmitAction",
    "CODE_ACTIONS",
    "extract_json",
    "parse_actions",
]


class ActionModel(BaseModel):
    """Base of every action: strict about unknown fields so typos are reported."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class EditSpec(ActionModel):
    """One file edit, in one of four forms:

    * ``{path, search, replace}``: ``search`` must match exactly once;
    * ``{path, content}``: the new full content (creates the file where the task allows
      new files);
    * ``{path, delete: true}``: remove the file;
    * ``{path, move_to}``: rename the file (its content unchanged).

    Deleting, moving and creating files needs a task that allows new files
    (``Task.creatable``); elsewhere they are rejected with a message."""

    path: str = Field(min_length=1, description="Workspace-relative path of an editable file.")
    search: str | None = Field(default=None, description="Exact text to find (must occur once).")
    replace: str | None = Field(default=None, description="Replacement for `search`.")
    content: str | None = Field(default=None, description="New full content of the file.")
    delete: bool = Field(default=False, description="Remove the file.")
    move_to: str | None = Field(
        default=None, min_length=1, description="Move (rename) the file to this path."
    )

    @model_validator(mode="after")
    def _one_form(self) -> EditSpec:
        forms = [
            self.content is not None,
            self.search is not None or self.replace is not None,
            self.delete,
            self.move_to is not None,
        ]
        if sum(forms) > 1:
            raise ValueError(
                "give one of `content`, `search`+`replace`, `delete` or `move_to`, not both"
            )
        if not any(forms):
            raise ValueError(
                "an edit needs `search` and `replace`, `content`, `delete` or `move_to`"
            )
        if forms[1]:
            if self.search is None or self.replace is None:
                raise ValueError("an edit needs both `search` and `replace`")
            if self.search == "":
                raise ValueError("`search` must not be empty")
        return self


class EditAction(ActionModel):
    """Change editable files: replace one exact occurrence of `search` with `replace`,
    or set a file's whole `content` (or `delete` / `move_to` where the task allows)."""

    action: Literal["edit"]
    edits: list[EditSpec] = Field(min_length=1, description="The edits, applied in order.")


class RunTestsAction(ActionModel):
    """Run the visible tests on the current files; the per-test report comes back."""

    action: Literal["run_tests"]
    tests: list[str] | None = Field(default=None, description="Test ids; default all visible.")


class ListAction(ActionModel):
    """List the files under a folder of the workspace (default: all of it) as a tree
    with their sizes."""

    action: Literal["list"]
    path: str | None = Field(
        default=None, description="Workspace-relative folder (or file); default: the root."
    )


class ReadAction(ActionModel):
    """Read lines `start`..`end` (1-based, inclusive) of a workspace file, numbered;
    a range over the observation budget is cut and says where to continue."""

    action: Literal["read"]
    path: str = Field(min_length=1, description="Workspace-relative path of a file.")
    start: int | None = Field(default=None, ge=1, description="First line (default 1).")
    end: int | None = Field(default=None, ge=1, description="Last line (default: the last).")

    @model_validator(mode="after")
    def _range(self) -> ReadAction:
        if self.start is not None and self.end is not None and self.end < self.start:
            raise ValueError(f"`end` ({self.end}) is before `start` ({self.start})")
        return self


class SearchAction(ActionModel):
    """Search the workspace's files for a literal string or, with `regex`, a regular
    expression (matched line by line, time-limited); hits come back as file:line: text."""

    action: Literal["search"]
    pattern: str = Field(
        min_length=1, max_length=200, description="Text to find (a regular expression if regex)."
    )
    path: str | None = Field(
        default=None, description="Folder or file to search in; default: the whole workspace."
    )
    regex: bool = Field(default=False, description="Treat `pattern` as a regular expression.")

    @model_validator(mode="after")
    def _pattern(self) -> SearchAction:
        from forgegym.core.navigation import check_pattern

        problem = check_pattern(self.pattern, self.regex)
        if problem is not None:
            raise ValueError(f"pattern: {problem}")
        return self


class LintAction(ActionModel):
    """Lint the editable files with ruff."""

    action: Literal["lint"]


class PlanAction(ActionModel):
    """Record a plan (graded only where it is grounded in the code)."""

    action: Literal["plan"]
    text: str = Field(description="The plan.")


class ReviewAction(ActionModel):
    """Record a review of the code or of your change (graded where grounded)."""

    action: Literal["review"]
    text: str = Field(description="The review.")


class ReflectAction(ActionModel):
    """Record a reflection on what happened so far (graded where grounded)."""

    action: Literal["reflect"]
    text: str = Field(description="The reflection.")


class SubmitAction(ActionModel):
    """Submit the current files for final grading; ends the episode."""

    action: Literal["submit"]


#: Navigating a repository: what every code family accepts besides editing.
NAVIGATION_ACTIONS: tuple[type[ActionModel], ...] = (ListAction, ReadAction, SearchAction)

#: The actions of the code families (Bugfix, Refactor, LRUPerformance, FlakyRepair).
CODE_ACTIONS: tuple[type[ActionModel], ...] = (
    EditAction,
    RunTestsAction,
    *NAVIGATION_ACTIONS,
    LintAction,
    PlanAction,
    ReviewAction,
    ReflectAction,
    SubmitAction,
)


@dataclass(frozen=True)
class ParseResult:
    """The outcome of parsing one action text: the actions, or an error message."""

    actions: tuple[ActionModel, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


_OPEN_FENCE = re.compile(r"```[ \t]*json[ \t]*\r?\n", re.IGNORECASE)
_CLOSE_FENCE = re.compile(r"```")
_MAX_DECODE_ATTEMPTS = 4096


def _last_balanced_json(text: str) -> Any:
    """Return the last top-level JSON object/array embedded in ``text``.

    Scans left to right; after a successful decode it skips past the value, so nested
    values are not mistaken for the outermost one. The number of failed attempts is
    bounded so adversarial text cannot make parsing quadratic.
    """
    return _last_balanced_json_at(text)[0]


def _last_balanced_json_at(text: str) -> tuple[Any, int]:
    """:func:`_last_balanced_json` and the index where that value starts (-1: none)."""
    decoder = json.JSONDecoder()
    found: Any = _NOTHING
    found_at = -1
    position = 0
    attempts = 0
    length = len(text)
    while position < length and attempts < _MAX_DECODE_ATTEMPTS:
        brace = min(
            (i for i in (text.find("{", position), text.find("[", position)) if i >= 0),
            default=-1,
        )
        if brace < 0:
            break
        attempts += 1
        try:
            value, end = decoder.raw_decode(text, brace)
        except (ValueError, RecursionError):
            position = brace + 1
            continue
        if isinstance(value, (dict, list)):
            found, found_at = value, brace
        position = end
    return found, found_at


def _unclosed_opener(text: str) -> int:
    """Index of the outermost ``{``/``[`` that is never closed (a cut-off JSON value), or
    -1. Counts brackets outside double-quoted strings, in one linear pass."""
    stack: list[int] = []
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append(index)
        elif char in "}]" and stack:
            stack.pop()
    return stack[0] if stack else -1


_NOTHING = object()


#: Closing fences tried per ```json block (a block whose strings hold code fences).
_MAX_FENCE_CLOSERS = 64


def _fenced_json(text: str) -> tuple[Any, str | None] | None:
    """The last closed ```json block's value, or its error; ``None`` without one.

    The block ends at the first closing fence after which it parses: JSON strings
    hold code fences (an edit of a file whose docstrings show code), so the first
    ````` after the opener is not always the block's end. Candidate closers are bounded
    (:data:`_MAX_FENCE_CLOSERS`); the error reported is the first closer's, as for a
    block that simply is not JSON."""
    fences = [m.start() for m in _CLOSE_FENCE.finditer(text)]
    for opener in reversed(list(_OPEN_FENCE.finditer(text))):
        start = opener.end()
        first = bisect.bisect_left(fences, start)
        closers = fences[first : first + _MAX_FENCE_CLOSERS]
        if not closers:
            continue  # not closed: an earlier block, or no block at all
        first_error: BaseException | None = None
        for close in closers:
            try:
                return json.loads(text[start:close]), None
            except (ValueError, RecursionError) as exc:
                first_error = first_error or exc
        return None, f"the ```json block is not valid JSON: {first_error}"
    return None


def extract_json(text: str) -> tuple[Any, str | None]:
    """Find the JSON payload of an action text. Returns ``(value, None)`` or ``(None, error)``."""
    fenced = _fenced_json(text)
    if fenced is not None:
        return fenced
    stripped = text.strip()
    if not stripped:
        return None, "the action is empty; reply with a JSON action object"
    try:
        return json.loads(stripped), None
    except (ValueError, RecursionError):
        pass
    value, start = _last_balanced_json_at(text)
    if value is _NOTHING:
        return None, _invalid_json_error(text)
    opener = _unclosed_opener(text)
    if 0 <= opener < start and _cut_off(text[opener:]):
        # The value found sits inside an outer one the text cuts off (a truncated
        # completion): report the outer one's error, not a fragment of it.
        return None, _invalid_json_error(text[opener:])
    return value, None


def _cut_off(candidate: str) -> bool:
    """Whether ``candidate`` is JSON that the end of the text interrupts."""
    stripped = candidate.strip()
    try:
        json.loads(stripped)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(stripped) - 1 or exc.msg.startswith("Unterminated string")
    except (ValueError, RecursionError):
        return False
    return False


def _invalid_json_error(text: str) -> str:
    """Why no action was found: the JSON decoder's error on what looks like the action
    (an unclosed ```json block, or the text from the first ``{``/``[``: a truncated or
    malformed object), else "no JSON action found"."""
    opened = list(_OPEN_FENCE.finditer(text))
    if opened:
        candidate, where = text[opened[-1].end() :], "the ```json block (not closed)"
    else:
        starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
        candidate, where = (text[min(starts) :], "the JSON action") if starts else ("", "")
    stripped = candidate.strip()
    if stripped:
        try:
            json.loads(stripped)
        except RecursionError:
            return f"{where} is nested too deeply to parse"
        except json.JSONDecodeError as exc:
            cut = " (the text ends inside it: cut off?)" if _cut_off(stripped) else ""
            return f"{where} is not valid JSON{cut}: {exc}"
        except ValueError as exc:
            return f"{where} is not valid JSON: {exc}"
    return "no JSON action found; put one JSON object (or a list) in a ```json block"


class ActionSet:
    """The actions one environment accepts, as a pydantic discriminated union."""

    def __init__(self, models: Sequence[type[ActionModel]], *, max_actions_per_step: int = 16):
        if not models:
            raise ValueError("models: an ActionSet needs at least one action model")
        self.models = tuple(models)
        self.names = tuple(m.model_fields["action"].annotation.__args__[0] for m in self.models)  # type: ignore[union-attr]
        union = Union[tuple(self.models)] if len(self.models) > 1 else self.models[0]  # noqa: UP007
        self.adapter: TypeAdapter[Any] = TypeAdapter(
            Annotated[union, Field(discriminator="action")] if len(self.models) > 1 else union  # type: ignore[arg-type,maybe-unrecognized-str-typeform,unused-ignore]
        )
        self.max_actions_per_step = max_actions_per_step

    def json_schema(self) -> dict[str, Any]:
        """JSON schema of one action (what ``info['action_schema']`` carries at reset)."""
        return self.adapter.json_schema()

    def parse(self, text: str) -> ParseResult:
        return parse_actions(text, self)


def _describe_validation_error(index: int, payload: Any, exc: ValidationError) -> str:
    name = payload.get("action") if isinstance(payload, dict) else None
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"][1:] if p != name) or "(object)"
        parts.append(f"{loc}: {err['msg']}")
    label = f"action {index}" + (f" ({name!r})" if name else "")
    return f"{label} is invalid: " + "; ".join(parts)


def parse_actions(text: str, action_set: ActionSet) -> ParseResult:
    """Parse ``text`` into actions of ``action_set``; never raises on any ``str``."""
    if not isinstance(text, str):
        return ParseResult(error=f"an action must be a string, got {type(text).__name__}")
    payload, error = extract_json(text)
    if error is not None:
        return ParseResult(error=error)
    items = payload if isinstance(payload, list) else [payload]
    if not items:
        return ParseResult(error="the action list is empty; give at least one action")
    if len(items) > action_set.max_actions_per_step:
        return ParseResult(
            error=f"too many actions in one step ({len(items)} > {action_set.max_actions_per_step})"
        )
    actions: list[ActionModel] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            return ParseResult(
                error=f"action {index} must be a JSON object, got {type(item).__name__}"
            )
        name = item.get("action")
        if name not in action_set.names:
            return ParseResult(
                error=f"action {index} has unknown or missing `action` {name!r}; "
                f"expected one of: {', '.join(action_set.names)}"
            )
        try:
            actions.append(action_set.adapter.validate_python(item))
        except ValidationError as exc:
            return ParseResult(error=_describe_validation_error(index, item, exc))
    return ParseResult(actions=tuple(actions))
