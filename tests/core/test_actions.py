"""The action parser: every string gives actions or an error message, never an exception."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgegym.core.actions import (
    CODE_ACTIONS,
    ActionSet,
    EditAction,
    RunTestsAction,
    SubmitAction,
    extract_json,
)

ACTIONS = ActionSet(CODE_ACTIONS)


def test_fenced_json_block_wins_over_surrounding_text() -> None:
    text = 'I think {"action": "lint"} is wrong.\n```json\n{"action": "submit"}\n```\nDone.'
    result = ACTIONS.parse(text)
    assert result.ok
    assert result.actions == (SubmitAction(action="submit"),)


def test_last_balanced_json_value_after_reasoning() -> None:
    text = (
        'First I considered {"action": "lint"} but then decided: '
        '{"action": "edit", "edits": [{"path": "a.py", "search": "x", "replace": "y"}]}'
    )
    result = ACTIONS.parse(text)
    assert result.ok
    (action,) = result.actions
    assert isinstance(action, EditAction)
    assert action.edits[0].path == "a.py"


def test_list_of_actions_keeps_order() -> None:
    result = ACTIONS.parse(json.dumps([{"action": "run_tests"}, {"action": "submit"}]))
    assert [type(a) for a in result.actions] == [RunTestsAction, SubmitAction]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("just prose", "no JSON action"),
        ('{"action": "fly"}', "expected one of"),
        ('{"edits": []}', "unknown or missing `action`"),
        ('{"action": "edit", "edits": [{"path": "a.py"}]}', "search"),
        ('{"action": "edit", "edits": [{"path": "a.py", "search": "", "replace": "b"}]}', "empty"),
        ('{"action": "submit", "extra": 1}', "extra"),
        ("[]", "empty"),
        ("[1, 2]", "must be a JSON object"),
        ("```json\n{not json\n```", "not valid JSON"),
    ],
)
def test_errors_say_what_was_wrong(text: str, fragment: str) -> None:
    result = ACTIONS.parse(text)
    assert not result.ok
    assert fragment.lower() in (result.error or "").lower()


def test_too_many_actions_is_an_error() -> None:
    result = ACTIONS.parse(json.dumps([{"action": "lint"}] * 17))
    assert result.error is not None and "too many" in result.error


def test_adversarial_nesting_is_bounded() -> None:
    assert not ACTIONS.parse("[" * 200_000).ok
    assert not ACTIONS.parse("{" * 200_000).ok


def test_edit_needs_exactly_one_form() -> None:
    both = {
        "action": "edit",
        "edits": [{"path": "a", "content": "x", "search": "a", "replace": "b"}],
    }
    assert "not both" in (ACTIONS.parse(json.dumps(both)).error or "")


def test_schema_is_a_discriminated_union() -> None:
    schema = ACTIONS.json_schema()
    assert schema["discriminator"]["propertyName"] == "action"


def test_extract_json_prefers_whole_text() -> None:
    assert extract_json('{"a": [1, {"b": 2}]}') == ({"a": [1, {"b": 2}]}, None)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_parse_never_raises(text: str) -> None:
    result = ACTIONS.parse(text)
    assert result.ok != (result.error is not None)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(
                st.sampled_from(["action", "edits", "path", "text"]), children, max_size=4
            )
        ),
        max_leaves=20,
    )
)
def test_parse_never_raises_on_arbitrary_json(value: object) -> None:
    result = ACTIONS.parse(json.dumps(value))
    assert result.ok != (result.error is not None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # cut off inside the edits list: a complete inner object must not be taken
        (
            '{"action": "edit", "edits": [{"path": "a.py", "search": "x", "replace": "y"}',
            "not valid JSON (the text ends inside it: cut off?): Expecting ','",
        ),
        (
            'Fixing it.\n```json\n{"action": "edit", "edits": [{"path": "a.py", "search": "x',
            "```json block (not closed) is not valid JSON (the text ends inside it: cut off?)",
        ),
        ('{"action": "submit"', "cut off?"),
        ("no braces at all", "no JSON action found"),
    ],
)
def test_truncated_json_reports_the_json_error(text: str, expected: str) -> None:
    result = ActionSet(CODE_ACTIONS).parse(text)
    assert result.error is not None and expected in result.error


def test_prose_braces_before_a_complete_action_still_parse() -> None:
    for text in ['a { b, then {"action": "submit"}', 'say "hi {"action": "submit"}']:
        assert ActionSet(CODE_ACTIONS).parse(text).ok, text


def test_a_fenced_block_whose_strings_hold_code_fences_parses() -> None:
    # An edit of a file whose docstrings show code: the first ``` is inside a string.
    content = 'def f():\n    """Example:\n\n    ```python\n    f()\n    ```\n    """\n'
    action = {"action": "edit", "edits": [{"path": "m.py", "content": content}]}
    text = "Here is my fix.\n```json\n" + json.dumps(action) + "\n```\nDone."
    result = ACTIONS.parse(text)
    assert result.ok, result.error
    assert result.actions[0].edits[0].content == content
    # A block that is not JSON at any closing fence still reports the first error.
    bad = ACTIONS.parse('```json\n{"action": "edit", ``` "x" ```\n')
    assert bad.error is not None and "not valid JSON" in bad.error
