"""The README is a front page whose every snippet runs: the Python blocks in order in one
namespace (as a reader pastes them into one session), every `forgegym` command line
parsed by the real parser, every extra a `pip install` names declared, every linked
page present."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def _blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README.read_text()) if lang == language]


def test_the_readme_is_a_front_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    # System requirements come before the install command.
    assert text.index("bubblewrap") < text.index("pip install")
    assert text.index("user namespaces") < text.index("## Install")


def test_every_linked_page_exists() -> None:
    for target in re.findall(r"\]\(([^)#]+)\)", README.read_text()):
        if not target.startswith("http"):
            assert (ROOT / target).is_file(), target


def test_install_commands_name_declared_extras_and_the_cpu_index() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    commands = [line for block in _blocks("bash") for line in block.splitlines()]
    first = commands[0]
    assert "pip install -e ." in first and "forgegym eval" in first  # light install + main job
    assert "[" not in first.split("pip install -e ", 1)[1].split()[0]  # no extra
    train = next(line for line in commands if ".[train]" in line)
    assert "--index-url https://download.pytorch.org/whl/cpu" in train
    for name in re.findall(r"\.\[([a-z,-]+)\]", README.read_text()):
        for extra in name.split(","):
            assert extra in extras, extra
    # The training extra brings no triton (it cannot run on a CPU; torch's CUDA builds
    # bring their own).
    assert not [r for r in extras["train"] if r.startswith("triton")]


def _forgegym_commands() -> list[list[str]]:
    found = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part.strip())
                if words and words[0] == "forgegym":
                    found.append(words[1:])
    return found


def test_every_forgegym_command_line_parses() -> None:
    from forgegym.cli import build_parser

    commands = _forgegym_commands()
    assert len(commands) >= 3
    parser = build_parser()
    for words in commands:
        args = parser.parse_args(words)
        assert callable(args.func), words


@pytest.mark.slow
def test_every_python_snippet_runs_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("datasets")  # the GRPO snippet needs the training extra
    from forgegym.family import unregister_family

    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "readme"}
    blocks = _blocks("python")
    assert len(blocks) >= 5
    try:
        for number, block in enumerate(blocks, start=1):
            exec(compile(block, f"README.md python block {number}", "exec"), namespace)
        assert "repo_report" in namespace["info"]  # the last reset: your own repository
        assert namespace["short"].unwrapped.max_steps == 3
        assert len(namespace["dataset"]) == 8
    finally:
        import gymnasium as gym

        for value in list(namespace.values()):
            if isinstance(value, gym.Env):
                value.close()
        unregister_family("short_bugfix")


def test_the_docs_agree_with_the_code_and_each_other() -> None:
    text = README.read_text()
    # Where state is written, and how long the suite takes, are on the front page.
    assert "~/.cache/forgegym" in text and "20+ minutes" in text
    # Repository mode loads a project's conftest files (docs/repository_mode.md, and the
    # code: ProjectRun's conftest=True); no page may say they are skipped.
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert "--noconftest" not in page.read_text(), page.name
