"""Task: data files (bytes) beside the agent-visible text files."""

from __future__ import annotations

import pytest

from forgegym.core.task import Task


def test_data_files_travel_as_base64_and_stay_out_of_files() -> None:
    task = Task(
        task_id="t/1",
        family="f",
        difficulty=0,
        title="t",
        description="d",
        files={"a.py": "A = 1\n"},
        data_files={"a.mo": b"\xff\x00\x01"},
    )
    again = Task.model_validate_json(task.model_dump_json())
    assert again.data_files == {"a.mo": b"\xff\x00\x01"} and again.files == task.files
    assert not task.may_create("a.mo")
    with pytest.raises(ValueError, match="also in files"):
        Task(
            task_id="t/2",
            family="f",
            difficulty=0,
            title="t",
            description="d",
            files={"a.py": ""},
            data_files={"a.py": b""},
        )
