"""Repository mode copies a project's read-only data files by content: a compiled
gettext catalogue (``.mo``, binary) and a resource read through ``importlib.resources``
reach the sandbox, a generated data module over ``max_file_bytes`` is copied instead of
refusing the repository, none of them is shown to or editable by the agent, and the
pristine manifest vouches for them as for the project's other read-only files."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the ids)

FAILING = ["tests/test_words.py::test_shout"]
CATALOGUE = "pkg/locale/fr/LC_MESSAGES/pkg.mo"
TABLE = "pkg/table.py"
#: Below the table module's size: it goes by the data channel.
MAX_FILE_BYTES = 4_000


def write_mo(path: Path, messages: dict[str, str]) -> None:
    """A GNU ``.mo`` catalogue (what ``msgfmt`` writes), no hash table."""
    keys = sorted(messages)
    ids = b"".join(k.encode() + b"\0" for k in keys)
    strs = b"".join(messages[k].encode() + b"\0" for k in keys)
    start = 7 * 4 + 16 * len(keys)
    originals, translations, offset = [], [], 0
    for key in keys:
        originals += [len(key.encode()), start + offset]
        offset += len(key.encode()) + 1
    offset = 0
    for key in keys:
        translations += [len(messages[key].encode()), start + len(ids) + offset]
        offset += len(messages[key].encode()) + 1
    header = struct.pack("Iiiiiii", 0x950412DE, 0, len(keys), 7 * 4, 7 * 4 + 8 * len(keys), 0, 0)
    body = struct.pack(f"{len(originals)}i", *originals)
    body += struct.pack(f"{len(translations)}i", *translations)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header + body + ids + strs)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("datafiles") / "words"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "words.py").write_text(
        "import gettext\nfrom pathlib import Path\n\n"
        "_LOCALE = Path(__file__).parent / 'locale'\n\n\n"
        "def hello(language: str) -> str:\n"
        "    catalogue = gettext.translation('pkg', _LOCALE, languages=[language])\n"
        "    return catalogue.gettext('Hello')\n\n\n"
        "def shout(text: str) -> str:\n"
        "    return text.lower() + '!'\n"  # the bug: upper
    )
    write_mo(
        root / CATALOGUE, {"": "Content-Type: text/plain; charset=UTF-8\n", "Hello": "Bonjour"}
    )
    (root / "pkg" / "logo.bin").write_bytes(bytes(range(256)))
    # A generated table over max_file_bytes; it looks at its own frame at import (as six
    # does), which the runtime policy allows only to code it trusts by content.
    rows = "".join(f"    {i}: {i * i},\n" for i in range(400))
    (root / TABLE).write_text(
        f"import sys\n\nNAME = sys._getframe(0).f_globals['__name__']\nSQUARES = {{\n{rows}}}\n"
    )
    (root / "tests" / "test_words.py").write_text(
        "from importlib.resources import files\n\n"
        "from pkg.table import NAME, SQUARES\nfrom pkg.words import hello, shout\n\n\n"
        "def test_hello_in_french():\n    assert hello('fr') == 'Bonjour'\n\n\n"
        "def test_logo_bytes():\n"
        "    assert files('pkg').joinpath('logo.bin').read_bytes() == bytes(range(256))\n\n\n"
        "def test_table():\n    assert NAME == 'pkg.table' and SQUARES[12] == 144\n\n\n"
        "def test_shout():\n    assert shout('hi') == 'HI!'\n"
    )
    assert (root / TABLE).stat().st_size > MAX_FILE_BYTES
    return root


@pytest.fixture(scope="module")
def env(project: Path) -> Any:
    made = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(project),
        failing_tests=FAILING,
        max_file_bytes=MAX_FILE_BYTES,
        max_steps=4,
    )
    yield made
    made.close()


def _submit(env: Any, edits: list[dict[str, Any]]) -> dict[str, Any]:
    env.reset(seed=0)
    actions = [{"action": "edit", "edits": edits}] if edits else []
    *_, info = env.step(json.dumps([*actions, {"action": "submit"}]))
    return info


def test_binary_data_and_a_large_data_module_reach_the_sandbox(env: Any) -> None:
    obs, info = env.reset(seed=0)
    report = info["repo_report"]
    # Every test agrees with the host: the catalogue, the resource and the table are there.
    assert report["differences"] == [], report["differences"]
    task = env.unwrapped.task
    assert set(task.data_files) == {CATALOGUE, "pkg/logo.bin", TABLE}
    assert task.data_files["pkg/logo.bin"] == bytes(range(256))
    # Never shown: not among the files, not in the observation.
    assert not set(task.data_files) & set(task.files)
    text = json.dumps(obs) if not isinstance(obs, str) else obs
    assert "pkg/logo.bin" not in text and TABLE not in text and "12: 144," not in text


def test_data_files_cannot_be_edited_or_replaced(env: Any) -> None:
    for path in (TABLE, CATALOGUE):
        env.reset(seed=0)
        edit = {"action": "edit", "edits": [{"path": path, "content": "x = 1\n"}]}
        obs, *_ = env.step(json.dumps(edit))
        assert "not editable" in str(obs), str(obs)[:500]


def test_the_reverted_bug_succeeds_and_the_noop_does_not(env: Any) -> None:
    fix = {"path": "pkg/words.py", "search": "text.lower()", "replace": "text.upper()"}
    assert _submit(env, [fix])["success"]
    assert not _submit(env, [])["success"]
