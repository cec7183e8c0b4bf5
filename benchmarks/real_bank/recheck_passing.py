"""Re-check a real project's passing tests under today's sandbox (trust changes since its
build can make a test fail on the pristine project).

For each named project, the reference fix of one of its tasks (the pristine project) is
graded with every visible test file (``full_suite=True``), as grading would run it. A
test of the record's ``passing`` set that fails there fails for every candidate, the
reference included, and would keep every task of the project from success (seen:
tomlkit's ``test_toml_file`` writes its example file back in place, which trust D11's
read-only pristine files refuse). ``--write`` moves such tests out of ``passing`` (they
stay in ``collected``, so grading excludes them) and records why under
``rechecked_out`` in the project's record.

Usage::

    python benchmarks/real_bank/recheck_passing.py tomlkit [--write]
"""

from __future__ import annotations

import argparse
import json
import sys

import gymnasium as gym

import forgegym  # noqa: F401  (registers the ids)
from forgegym.envs.bugfix.real import REAL_BANK_DIR
from forgegym.envs.bugfix.repo import RepoHidden
from forgegym.envs.bugfix.repo_grader import RepoGrader
from forgegym.sandbox.jobs import PytestResult


def recheck(project: str) -> dict[str, str]:
    """``{test id: why it fails now}`` for ``project``'s passing tests that fail on the
    pristine project under the current sandbox."""
    env = gym.make("Forge/Bugfix-v0", bank="real", max_steps=1).unwrapped
    try:
        bank = env.task_bank
        task_id = next(
            i for i in sorted(bank.ids()) if bank.entry(i)["project"] == project and "@" not in i
        )
        task = bank.get(task_id)
        record = json.loads(next(REAL_BANK_DIR.glob(f"{project}-*.project.json")).read_text())
        env.grader = RepoGrader(full_suite=True)
        seen: dict[str, str] = {}
        real_terms = RepoGrader.terms

        def keep_results(self, submission, results, state):  # type: ignore[no-untyped-def]
            visible = results[0]
            assert isinstance(visible, PytestResult)
            hidden = RepoHidden.model_validate(submission.task.hidden)
            failing = set(hidden.failing_tests)
            verdicts = visible.verdicts  # computed on each access
            passing = set(record["passing"]) - failing
            for r in visible.records:
                if r.nodeid in passing and not verdicts.get(r.nodeid, False):
                    seen[r.nodeid] = f"{r.error_type}: {r.message}"[:200]
            return real_terms(self, submission, results, state)

        RepoGrader.terms = keep_results  # type: ignore[method-assign]
        try:
            edits = [{"path": p, "content": c} for p, c in sorted(task.reference.items())]
            env.grade_completions(task_id, [json.dumps({"action": "edit", "edits": edits})])
        finally:
            RepoGrader.terms = real_terms  # type: ignore[method-assign]
        return seen
    finally:
        env.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("projects", nargs="+")
    parser.add_argument("--write", action="store_true", help="update the project records")
    args = parser.parse_args(argv)
    for project in args.projects:
        failing = recheck(project)
        print(json.dumps({project: failing}, indent=1), flush=True)
        if args.write and failing:
            path = next(REAL_BANK_DIR.glob(f"{project}-*.project.json"))
            record = json.loads(path.read_text())
            record["passing"] = [t for t in record["passing"] if t not in failing]
            record.setdefault("rechecked_out", {}).update(failing)
            path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
            print(f"{path.name}: {len(failing)} test(s) moved out of passing", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
