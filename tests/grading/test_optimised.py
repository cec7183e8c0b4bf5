"""Optimised batch grading gives exactly the reference path's rewards and breakdowns.

``optimised_grading=False`` is the explicit switch for the reference path (per-task
``grade_completions``, one ``run_many``, per-completion lint, no parser caches); the
optimised path dedups identical submissions, lints a batch with one ruff run, streams
jobs to the pool and grades several tasks in one batch. Same inputs, same outputs.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.family import family_for_env
from forgegym.grading.batch import Submission, grade_many, submission_key
from forgegym.policies import NOOP_ACTION
from forgegym.sandbox.workspace import Workspace


def _sample(env: Any, env_id: str, task_ids: list[str]) -> list[tuple[str, str]]:
    """Per task: successes, duplicates (verbatim and after free text), no-ops, a parse
    error, a compile error, hacks, a partial fix where the family has one."""
    family = family_for_env(env_id)
    reference = family.reference_action()
    partial = family.partial_action()
    hacks = list(family.hack_actions().values())
    items: list[tuple[str, str]] = []
    for index, task_id in enumerate(task_ids):
        task = env.task_bank.get(task_id)
        ref = reference(task)
        broken = json.dumps(
            {"action": "edit", "edits": [{"path": task.editable_files[0], "content": "def (:\n"}]}
        )
        completions = [
            ref,
            NOOP_ACTION,
            ref,  # verbatim duplicate
            "I found the bug; here is the fix.\n" + ref,  # same submission, other text
            "Nothing to change.\n" + NOOP_ACTION,
            "this is not an action",
            broken,
            json.dumps({"action": "plan", "text": "read the failing test"}),
            *(hack(task) for hack in hacks[index::2][:2]),  # different hacks per task
        ]
        if partial is not None:
            completions.append(partial(task) or NOOP_ACTION)
        items.extend((task_id, completion) for completion in completions)
    return items


def _compare(env_id: str, n_tasks: int, extra: Any = None, **kwargs: Any) -> list[float]:
    fast = gym.make(env_id, max_steps=1, **kwargs).unwrapped
    slow = gym.make(env_id, max_steps=1, optimised_grading=False, **kwargs).unwrapped
    try:
        assert fast.optimised_grading and not slow.optimised_grading
        task_ids = fast.task_bank.task_ids(n_tasks, seed=11)
        items = _sample(fast, env_id, task_ids)
        if extra is not None:
            items += extra(fast, task_ids)
        optimised = fast.grade_batch(items)  # every task in one batch
        per_task = {
            task_id: iter(slow.grade_completions(task_id, [c for t, c in items if t == task_id]))
            for task_id in task_ids
        }
        reference = [next(per_task[task_id]) for task_id, _ in items]
        assert len(optimised) == len(reference) == len(items)
        for (item, (r_fast, b_fast)), (r_slow, b_slow) in zip(
            zip(items, optimised, strict=True), reference, strict=True
        ):
            assert r_fast == r_slow, item
            assert b_fast.model_dump() == b_slow.model_dump(), item
        # The per-task API of the optimised env agrees too.
        first = [c for t, c in items if t == task_ids[0]]
        again = fast.grade_completions(task_ids[0], first)
        mine = [r for (t, _), (r, _) in zip(items, reference, strict=True) if t == task_ids[0]]
        assert [r for r, _ in again] == mine
        return [r for r, _ in optimised]
    finally:
        fast.close()
        slow.close()


def _spread(rewards: list[float]) -> None:
    # The sample must exercise different verdicts, or agreement would prove little.
    assert len({round(r, 6) for r in rewards}) >= 4, rewards


def test_bugfix_optimised_grading_equals_the_reference_path() -> None:
    _spread(_compare("Forge/Bugfix-v0", 2))


def _flaky_forge(task: Any, tz: str | None) -> str:
    """The reference fix plus code under test that forks (the sandbox's runtime policy
    refuses it: ``unsafe``) in every rerun, or only in the reruns with time zone ``tz``."""
    from forgegym.envs.flaky.policies import edit_action

    path = next(p for p in task.editable_files if p not in task.visible_test_files)
    source = task.reference.get(path, task.files[path])
    test = "True" if tz is None else f"_os.environ.get('TZ') == {tz!r}"
    forged = source + f"\n\nimport os as _os\n\nif {test}:\n    _os.fork()\n"
    return edit_action(task, {**task.reference, path: forged})


def _late_tz(schedule: Any) -> str:
    """The time zone of the latest rerun that is the only one with it (not the calm's)."""
    zones = [run.tz for run in schedule]
    return [tz for tz in zones if zones.count(tz) == 1 and tz != zones[0]][-1]


def _flaky_extra(env: Any, task_ids: list[str]) -> list[tuple[str, str]]:
    """FlakyRepair beyond the common sample, per task: every registered hack, the
    reference patch with other diagnoses (one patch: the jobs run once and each is
    scored on its own claim) and code that is refused only under the last rerun whose
    time zone the calm rerun does not have, after others passed (must gate ``unsafe``)."""
    from forgegym.envs.flaky.policies import edit_action

    family = family_for_env("Forge/FlakyRepair-v0")
    items: list[tuple[str, str]] = []
    for task_id in task_ids:
        task = env.task_bank.get(task_id)
        schedule = env.grader.schedule(task)
        late = _late_tz(schedule)
        completions = [hack(task) for hack in family.hack_actions().values()]
        for category, confidence in (("ordering", 0.3), (None, 0.9)):
            wrong = {"category": category or "unknown", "location": "nowhere.py::f"}
            completions.append(
                edit_action(task, dict(task.reference), {**wrong, "confidence": confidence})
            )
        completions.append(_flaky_forge(task, late))
        items.extend((task_id, completion) for completion in completions)
    return items


@pytest.mark.slow
def test_flaky_optimised_grading_equals_the_reference_path() -> None:
    """The optimised path shares one run of the jobs between submissions of one patch
    and stops a submission's jobs at a refused run: same rewards and breakdowns."""
    rewards = _compare("Forge/FlakyRepair-v0", 1, extra=_flaky_extra)
    _spread(rewards)


@pytest.mark.slow
def test_flaky_refused_run_ends_the_jobs_and_late_refusals_still_gate() -> None:
    """A run the sandbox refused decides the breakdown (``unsafe``), so the jobs after
    it are cancelled; code refused only under a late rerun's conditions, after passing
    reruns, is still gated, as on the reference path."""
    from forgegym.sandbox.runners import ForkServerRunner

    runner = ForkServerRunner(workers=1)
    env = gym.make("Forge/FlakyRepair-v0", max_steps=1, runner=runner).unwrapped
    try:
        task_id = env.task_bank.task_ids(1, seed=11)[0]
        task = env.task_bank.get(task_id)
        schedule = env.grader.schedule(task)
        late = _late_tz(schedule)
        planned: list[int] = []
        ran: list[str] = []
        jobs, run = env.grader.jobs, runner.run

        def counting_jobs(submission: Submission) -> Any:
            out = jobs(submission)
            planned.append(len(out))
            return out

        def counting_run(job: Any) -> Any:
            ran.append(job.env.get("TZ", ""))
            return run(job)

        env.grader.jobs = counting_jobs  # type: ignore[method-assign]
        runner.run = counting_run  # type: ignore[method-assign]
        ((reward, breakdown),) = env.grade_completions(task_id, [_flaky_forge(task, None)])
        assert breakdown.gates == ["unsafe"] and "code 75" in breakdown.notes[0]
        assert planned[0] > 1 and len(ran) == 1  # one worker: the rest never started
        ran.clear()
        ((_, late_breakdown),) = env.grade_completions(task_id, [_flaky_forge(task, late)])
        assert late_breakdown.gates == ["unsafe"]
        assert ran[-1] == late and ran.count(late) == 1  # stopped at its first refusal
        assert len(ran) > 1  # reruns before it ran (and passed)
    finally:
        env.close()
        runner.close()
    slow = gym.make("Forge/FlakyRepair-v0", max_steps=1, optimised_grading=False).unwrapped
    try:
        ((ref_reward, ref_breakdown),) = slow.grade_completions(task_id, [_flaky_forge(task, None)])
        ((_, ref_late),) = slow.grade_completions(task_id, [_flaky_forge(task, late)])
    finally:
        slow.close()
    assert (reward, breakdown.model_dump()) == (ref_reward, ref_breakdown.model_dump())
    assert late_breakdown.model_dump() == ref_late.model_dump()


@pytest.mark.slow
def test_flaky_repository_mode_optimised_equals_the_reference_path(tmp_path: Any) -> None:
    """A real repository (corpus case, hash-seed flakiness): the upstream fix, its
    duplicates and diagnosis variants, the weakened assertion, a skip marker, no-ops
    and a parse error grade the same on both paths."""
    import shutil
    from pathlib import Path

    case = Path(__file__).parents[1] / "envs" / "flaky" / "corpus" / "sentry_replays_sort_ids"
    meta = json.loads((case / "case.json").read_text())
    repo = tmp_path / "repo"
    shutil.copytree(case / "repo", repo)
    fix = [
        {"path": str(f.relative_to(case / "fix")), "content": f.read_text()}
        for f in sorted((case / "fix").rglob("*.py"))
    ]
    test_path = meta["test_id"].partition("::")[0]
    source = (repo / test_path).read_text()
    name = meta["test_id"].rpartition("::")[2]
    skip = source.replace(f"def {name}(", f"@pytest.mark.skip(reason='flaky')\ndef {name}(", 1)
    weaken = meta["weaken"]
    diagnosis = {"category": "hash_order", "location": f"{test_path}::{name}"}

    def action(edits: list[dict[str, str]], **extra: Any) -> str:
        first = [{"action": "edit", "edits": edits, **extra}] if edits else []
        return json.dumps([*first, {"action": "submit"}])

    completions = [
        action(fix),
        action(fix),
        action(fix, diagnosis={**diagnosis, "confidence": 0.9}),
        action(fix, diagnosis={**diagnosis, "confidence": 0.2}),
        action(
            [{"path": weaken["path"], "search": weaken["search"], "replace": weaken["replace"]}]
        ),
        action([{"path": test_path, "content": "import pytest\n" + skip}]),
        NOOP_ACTION,
        "Nothing to change.\n" + NOOP_ACTION,
        "this is not an action",
    ]
    kwargs: dict[str, Any] = {"repo_path": str(repo), "test_id": meta["test_id"]}
    kwargs.update(order_analysis=False, max_steps=1, reruns=5)  # hash seeds 0-4
    fast = gym.make("Forge/FlakyRepair-v0", **kwargs).unwrapped
    slow = gym.make("Forge/FlakyRepair-v0", optimised_grading=False, **kwargs).unwrapped
    try:
        (task_id,) = fast.task_bank.task_ids(1)
        optimised = fast.grade_batch([(task_id, c) for c in completions])
        reference = slow.grade_completions(task_id, completions)
    finally:
        fast.close()
        slow.close()
    for completion, (r_fast, b_fast), (r_slow, b_slow) in zip(
        completions, optimised, reference, strict=True
    ):
        assert (r_fast, b_fast.model_dump()) == (r_slow, b_slow.model_dump()), completion
    solved = [b.terms["solved"].value for _, b in optimised if "solved" in b.terms]
    assert solved[:2] == [1.0, 1.0], optimised[0][1]  # the fix solves it
    # A user's repository has no ground-truth category: a diagnosis and its confidence
    # are not applicable, so the claims (sharing the fix's run) change nothing.
    assert optimised[2][0] == optimised[3][0] == optimised[0][0]
    calibration = optimised[2][1].terms.get("calibration")
    assert calibration is None or calibration.weight == 0.0
    _spread([r for r, _ in optimised])


@pytest.mark.slow
def test_refactor_optimised_grading_equals_the_reference_path() -> None:
    _spread(_compare("Forge/Refactor-v0", 1))


def test_identical_submissions_are_graded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    env = gym.make("Forge/Bugfix-v0", max_steps=1).unwrapped
    try:
        task_id = env.task_bank.task_ids(1, seed=5)[0]
        ref = family_for_env("Forge/Bugfix-v0").reference_action()(env.task_bank.get(task_id))
        group = [ref, NOOP_ACTION] * 4 + ["thinking...\n" + ref]
        seen: list[str] = []
        jobs = env.grader.jobs

        def counting(submission: Submission) -> Any:
            seen.append(submission_key(submission))
            return jobs(submission)

        monkeypatch.setattr(env.grader, "jobs", counting)
        graded = env.grade_completions(task_id, group)
        assert len(seen) == 2 == len(set(seen))  # one fix, one no-op
        assert [r for r, _ in graded] == [graded[0][0], graded[1][0]] * 4 + [graded[0][0]]
        assert graded[0][0] > graded[1][0]
    finally:
        env.close()


def test_submission_key_tells_apart_what_graders_read() -> None:
    files = {"m.py": "x = 1\n", "test_m.py": "def test(): pass\n"}
    workspace = Workspace(files, ["m.py"], on_disk=False)

    class _Task:
        task_id = "t"

    def key(**changes: Any) -> str:
        fields: dict[str, Any] = {"task": _Task(), "files": {"m.py": "x = 1\n"}}
        fields.update(changes)
        return submission_key(Submission(workspace=workspace, **fields))

    base = key()
    assert key() == base
    assert key(files={"m.py": "x = 2\n"}) != base
    assert key(parse_errors=1) != base
    assert key(steps_used=2) != base
    assert key(deleted=("m.py",)) != base
    from forgegym.grading.batch import Note

    assert key(notes=[Note("review", "m.py")]) != base
    assert key(diagnosis={"category": "order"}) != base


def test_grade_many_never_raises_and_keeps_order_when_a_grader_fails() -> None:
    class Broken:
        def jobs(self, submission: Submission) -> list[Any]:
            if submission.files.get("m.py") == "boom":
                raise RuntimeError("scan bug")
            return []

        def score(self, submission: Submission, results: Any) -> Any:
            from forgegym.rewards import compose

            return compose({"ok": 1.0 if submission.files["m.py"] == "x" else 0.5}, {"ok": 1.0})

    class _Task:
        task_id = "t"

    workspace = Workspace({"m.py": "x"}, ["m.py"], on_disk=False)
    subs = [
        Submission(task=_Task(), files={"m.py": text}, workspace=workspace)  # type: ignore[arg-type]
        for text in ("x", "boom", "y", "x")
    ]
    out = grade_many(Broken(), subs, optimised=True)
    assert [b.gates for b in out] == [[], ["unverifiable"], [], []]
    assert [b.total for b in out] == [out[0].total, out[1].total, out[2].total, out[0].total]
    assert out[0].total > out[2].total


def test_trl_reward_functions_agree_on_both_paths() -> None:
    from forgegym.integrations.trl import make_reward_funcs

    env_id = "Forge/Bugfix-v0"
    env = gym.make(env_id, max_steps=1).unwrapped
    try:
        task_ids = env.task_bank.task_ids(2, seed=21)
        items = [(t, c) for t, c in _sample(env, env_id, task_ids) if "edit" in c or "not" in c]
    finally:
        env.close()
    outputs = []
    for kwargs in ({}, {"optimised_grading": False}):
        (reward,) = make_reward_funcs(env_id, env_kwargs=kwargs)
        logged: dict[str, float] = {}
        values = reward(
            prompts=[[]] * len(items),
            completions=[[{"role": "assistant", "content": c}] for _, c in items],
            task_id=[t for t, _ in items],
            log_metric=logged.__setitem__,
        )
        outputs.append((values, logged))
    assert outputs[0] == outputs[1]
    assert 0.0 < outputs[0][1]["reward/success"] < 1.0


def test_shared_runs_seed_grouping_and_cutoff_in_the_streaming_path(tmp_path: Any) -> None:
    """The optimised path's job scheduling, with a one-worker runner that records what
    it runs: submissions with one ``execution_key`` share a run; jobs of other hash
    seeds than the first start grouped by seed after every submission is prepared (as
    ``run_many`` orders them); a ``cutoff`` result keeps the submission's later jobs
    from running; ``score`` always sees its results in job order."""
    from forgegym.rewards import compose
    from forgegym.sandbox.jobs import CallOutcome, CallResult, PytestJob, RunStatus
    from forgegym.sandbox.runners import Runner

    class Recorder(Runner):
        def __init__(self) -> None:  # no pool, no sandbox: nothing runs for real
            self.workers, self._closed, self.seen = 1, False, []

        def _run(self, job: Any) -> Any:
            self.seen.append(job.targets[0])
            outcome = CallOutcome(ok=True, value=job.targets[0])
            return CallResult(status=RunStatus.COMPLETED, outcomes=[outcome])

    class Grader:
        def __init__(self) -> None:
            self.planned: list[str] = []

        def jobs(self, sub: Submission) -> list[Any]:
            name = sub.files["m.py"]
            self.planned.append(name)
            return [
                PytestJob(workdir=str(tmp_path), targets=[f"{name}-{i}"], python_hash_seed=seed)
                for i, seed in enumerate((0, 1, 2))
            ]

        def execution_key(self, sub: Submission) -> str:
            return sub.files["m.py"]

        def cutoff(self, sub: Submission, result: Any) -> bool:
            return str(result.outcome(0).value).startswith("stop")

        def score(self, sub: Submission, results: Any) -> Any:
            values = [r.outcome(0).value for r in results]
            return compose({}, {}, notes=[",".join(values), str(sub.parse_errors)])

    class _Task:
        task_id = "t"

    workspace = Workspace({"m.py": ""}, ["m.py"], on_disk=False)
    subs = [
        Submission(task=_Task(), files={"m.py": name}, workspace=workspace, parse_errors=errors)  # type: ignore[arg-type]
        for name, errors in (("a", 0), ("b", 0), ("a", 1), ("stop", 0))
    ]
    runner, grader = Recorder(), Grader()
    out = grade_many(grader, subs, runner, optimised=True)
    assert grader.planned == ["a", "b", "stop"]  # the second "a" shares the first's run
    assert runner.seen == ["a-0", "b-0", "stop-0", "a-1", "b-1", "a-2", "b-2"]
    assert [b.notes for b in out] == [
        ["a-0,a-1,a-2", "0"],
        ["b-0,b-1,b-2", "0"],
        ["a-0,a-1,a-2", "1"],  # scored on its own (parse errors), on the shared run
        ["stop-0", "0"],  # decided by its first result: the rest never ran
    ]
