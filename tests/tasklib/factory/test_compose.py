"""Two-bug tasks composed from a built bank's mutants (issue 39): built offline from the
vendored textkit project, served by the same bank, graded through the Bugfix env."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.cli import main as cli_main
from forgegym.envs.bugfix.real import RealTaskBank
from forgegym.tasklib.factory.build import read_manifest
from forgegym.tasklib.factory.compose import (
    COMPOSED_KINDS,
    apply_parts,
    compose_bank,
    entry_parts,
)
from tests.fixtures.textkit_bank import build_textkit_bank

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

NOOP = json.dumps({"action": "submit"})


@pytest.fixture(scope="module")
def composed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[dict]]:
    base = tmp_path_factory.mktemp("compose")
    cache, out = build_textkit_bank(base)
    compose_bank(out, per_kind=3, seed=1)
    return cache, out, read_manifest(out / "textkit-1.0.multi.jsonl.gz")


def test_pairs_of_each_kind_are_kept_with_their_parts(composed) -> None:
    _, out, entries = composed
    kinds = {e["kind"] for e in entries}
    # textkit is one module: no pair across modules
    assert kinds == {"mutants_function", "mutants_module"}
    singles = {e["id"].split("/", 3)[3]: e for e in read_manifest(out / "textkit-1.0.jsonl.gz")}
    for entry in entries:
        parts = entry_parts(entry)
        assert len(parts) == 2 and entry["kind"] in COMPOSED_KINDS
        functions = {p["mutation"][0] for p in parts}
        assert (len(functions) == 1) == (entry["kind"] == "mutants_function")
        # each part is a confirmed single mutant of the bank
        for key in entry["id"].split("/", 4)[4].split("+"):
            assert key in singles
        assert entry["f2p"] and not set(entry["f2p"]) & set(entry["p2p"])
        assert all(f"`{fn}`" in entry["report"] for fn in functions)
    stats = json.loads((out / "textkit-1.0.multi.json").read_text())
    assert sum(stats["kept"].values()) == len(entries)


def test_two_sites_of_one_function_hold_both_changes(composed) -> None:
    _, out, entries = composed
    record = json.loads((out / "textkit-1.0.project.json").read_text())
    assert record["project"] == "textkit"
    pair = next(e for e in entries if e["kind"] == "mutants_function")
    bank = RealTaskBank(out, behaviour=False)
    files = bank.get(pair["id"]).reference  # the pristine changed files
    both = apply_parts(files, entry_parts(pair))
    for part in entry_parts(pair):
        alone = apply_parts(files, [part])
        assert alone != both and alone != files


def test_the_env_grades_a_pair_as_two_bugs(composed, tmp_path: Path, monkeypatch) -> None:
    cache, out, entries = composed
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    monkeypatch.setenv("FORGEGYM_BEHAVIOUR_DIR", str(tmp_path / "behaviour"))
    bank = RealTaskBank(out, cache_dir=cache, behaviour=False)
    env = gym.make("Forge/Bugfix-v0", bank=str(out), max_steps=1)
    try:
        for entry in entries[:2]:
            task = bank.get(entry["id"])
            assert task.metadata["kind"] == entry["kind"]
            ((path, pristine),) = task.reference.items()  # one module in textkit
            fix = {"action": "edit", "edits": [{"path": path, "content": pristine}]}
            # fixing only one of the two bugs: the other part's mutant alone
            first, second = entry_parts(entry)
            half = apply_parts(task.reference, [second])[path]
            half_fix = {"action": "edit", "edits": [{"path": path, "content": half}]}
            (full, info), (partial, pinfo), (noop, ninfo) = env.unwrapped.grade_completions(
                entry["id"], [json.dumps(fix), json.dumps(half_fix), NOOP]
            )
            assert env.unwrapped.solved(info), info["reward_breakdown"]
            assert not env.unwrapped.solved(pinfo) and partial < full
            assert not env.unwrapped.solved(ninfo) and noop < full
    finally:
        env.close()


def test_the_cli_names_its_mistakes(composed, tmp_path: Path, capsys) -> None:
    assert cli_main(["tasks", "compose", str(tmp_path)]) == 2
    assert "not a bank folder" in capsys.readouterr().err
    _, out, _ = composed
    assert cli_main(["tasks", "compose", str(out), "--kinds", "mutants_everywhere"]) == 2
    assert "--kinds: unknown" in capsys.readouterr().err
    assert cli_main(["tasks", "compose", str(out), "--project", "nothing"]) == 2
    assert "no project to compose" in capsys.readouterr().err
