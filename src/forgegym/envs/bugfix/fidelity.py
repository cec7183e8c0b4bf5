"""Sandbox fidelity: does ordinary Python run in the sandbox as it runs on the host?

An idiom corpus is a small repository with one module per idiom real projects use (code
that runs at import) and one test file per module (``tests/test_<idiom>.py``), plus one
known failing test (repository mode needs one to make a task). :func:`measure` makes a
repository-mode task of it exactly as ``gym.make("Forge/Bugfix-v0", repo_path=...,
failing_tests=[...])`` does (the suite runs in the sandbox, refused test files are
bisected out, and the suite runs once more as a plain pytest run on the host), and reads
the per-test agreement from the task's ``repo_report``; the host outcomes come from
:func:`forgegym.tasklib.agreement.host_outcomes` (plain pytest in a copy of the whole
repository). An idiom agrees when its test has the same outcome in both places.

The corpus shipped with forgegym's tests is ``tests/fixtures/repos/idioms``;
``benchmarks/fidelity.py`` prints its table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner

__all__ = ["FidelityReport", "IdiomRow", "measure"]

#: The corpus's known failing test file (not an idiom).
SEED_TEST = "tests/test_seed.py"


@dataclass(frozen=True)
class IdiomRow:
    """One idiom: its test's outcome on the host and in the sandbox."""

    idiom: str
    nodeid: str
    host: str
    sandbox: str
    cause: str = ""

    @property
    def agree(self) -> bool:
        return self.host == self.sandbox


@dataclass
class FidelityReport:
    """Every idiom of a corpus, host against sandbox."""

    rows: list[IdiomRow] = field(default_factory=list)
    error: str = ""  # the task could not be made at all (every idiom then disagrees)

    @property
    def total(self) -> int:
        return len(self.rows)

    @property
    def agreeing(self) -> int:
        return sum(r.agree for r in self.rows)

    @property
    def host_failures(self) -> list[IdiomRow]:
        """Idioms whose test does not pass on the host: a defect of the corpus."""
        return [r for r in self.rows if r.host != "passed"]

    def disagreeing(self) -> list[IdiomRow]:
        return [r for r in self.rows if not r.agree]

    def table(self) -> str:
        width = max([len(r.idiom) for r in self.rows] + [5])
        lines = [f"{'idiom':<{width}}  {'host':<8} {'sandbox':<14} agree  cause"]
        for r in self.rows:
            mark = "yes" if r.agree else "NO"
            cause = "" if r.agree else r.cause[:110]
            lines.append(f"{r.idiom:<{width}}  {r.host:<8} {r.sandbox:<14} {mark:<5}  {cause}")
        lines.append(f"agree: {self.agreeing}/{self.total}")
        if self.error:
            lines.append(f"task not made: {self.error[:300]}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "agreeing": self.agreeing,
            "total": self.total,
            "error": self.error,
            "rows": [
                {
                    "idiom": r.idiom,
                    "nodeid": r.nodeid,
                    "host": r.host,
                    "sandbox": r.sandbox,
                    "agree": r.agree,
                    "cause": r.cause,
                }
                for r in self.rows
            ],
        }


def _idiom_of(nodeid: str) -> str | None:
    path = nodeid.partition("::")[0]
    name = PurePosixPath(path).stem
    if path == SEED_TEST or not name.startswith("test_"):
        return None
    return name[len("test_") :]


def measure(
    corpus: str | Path,
    *,
    runner: Runner | None = None,
    test_dependencies: Sequence[str] | None = None,
    timeout_s: float = 300.0,
    per_file: bool = False,
) -> FidelityReport:
    """Run the corpus at ``corpus`` on the host and, as repository mode does, in the
    sandbox; one row per idiom test.

    Args:
        corpus: the corpus repository's root.
        runner: the sandbox runner (default: the shared pool).
        test_dependencies: what repository mode installs for the tests; the default
            ``None``: what the corpus declares (pydantic, attrs, hypothesis,
            typing_extensions), as for a user's project: the sandbox's runtime holds only
            the harness's own packages (docs/design/004).
        timeout_s: the host run's limit.
        per_file: instead of making one repository-mode task of the whole corpus (where
            one file's collection error refuses the whole repository), run each idiom's
            test file as its own job of the same project run (the copy, configuration,
            import roots and hash seed of repository mode): a diagnosis per idiom.
    """
    from forgegym.envs.bugfix.repo import repo_task
    from forgegym.tasklib.agreement import host_outcomes
    from forgegym.tasklib.project import MAX_FILE_BYTES, MAX_FILES, project_layout, read_project

    root = Path(corpus)
    files, _skipped, data = read_project(root, max_file_bytes=MAX_FILE_BYTES, max_files=MAX_FILES)
    layout = project_layout(files)
    tests = sorted(p for p in files if layout.is_test_file(p))
    host, _wall, status = host_outcomes(root, tests, layout, timeout_s=timeout_s)
    seed = sorted(i for i in host if i.startswith(SEED_TEST + "::"))
    if per_file:
        return _per_file(files, data, layout, host, runner, test_dependencies, root, timeout_s)
    report = FidelityReport()
    sandbox_of: dict[str, tuple[str, str]] = {}
    try:
        task = repo_task(
            root,
            seed or [f"{SEED_TEST}::test_seed_bug"],
            runner=runner,
            test_dependencies=None if test_dependencies is None else list(test_dependencies),
            host_check=True,
            time_limit_cap_s=timeout_s,
        )
    except ValueError as exc:
        report.error = str(exc)
    else:
        repo_report = task.metadata["repo_report"]
        for diff in repo_report["differences"]:
            sandbox_of[diff["nodeid"]] = (
                str(diff["sandbox"]),
                f"{diff['cause']}: {diff['detail']}".strip(": "),
            )
    if status != "ran":
        report.error = (report.error + f"; host run {status}").strip("; ")
    for nodeid in sorted(host):
        idiom = _idiom_of(nodeid)
        if idiom is None:
            continue
        outcome = host[nodeid][0]
        if report.error and not sandbox_of:
            sandbox, cause = "not run", report.error
        else:
            sandbox, cause = sandbox_of.get(nodeid, (outcome, ""))
        report.rows.append(IdiomRow(idiom, nodeid, outcome, sandbox, cause))
    return report


def _per_file(
    files: dict[str, str],
    data: dict[str, bytes],
    layout: Any,
    host: dict[str, tuple[str, str]],
    runner: Runner | None,
    test_dependencies: Sequence[str] | None,
    root: Path,
    timeout_s: float,
) -> FidelityReport:
    """Each idiom's test file as its own sandbox job, as repository mode runs it."""
    from forgegym.sandbox.jobs import PytestJob, PytestResult, pristine_manifest
    from forgegym.sandbox.runners import get_default_runner
    from forgegym.sandbox.workspace import Workspace
    from forgegym.tasklib.baseline import REPO_HASH_SEED
    from forgegym.tasklib.depenv import declared_test_dependencies, ensure_environment

    requirements = (
        declared_test_dependencies(files) if test_dependencies is None else list(test_dependencies)
    )
    site = ensure_environment(requirements, base=root.resolve())
    if site is not None:
        layout = layout.with_site_dirs([str(site)])
    project = layout.run()
    ids = sorted(i for i in host if _idiom_of(i) is not None)
    targets = sorted({i.partition("::")[0] for i in ids})
    run = runner or get_default_runner()
    workspace = Workspace(files, (), prefix="fg-fidelity-", data_files=data)
    try:
        directory = workspace.materialise({}, {})
        jobs = [
            PytestJob(
                workdir=str(directory),
                targets=[t],
                timeout_s=timeout_s,
                project=project,
                conftest=True,
                python_hash_seed=REPO_HASH_SEED,
                # The project as it is: every file pristine (docs/design/004).
                pristine=pristine_manifest(files, data),
            )
            for t in targets
        ]
        results = dict(zip(targets, run.run_many(jobs), strict=True))
    finally:
        workspace.close()
    report = FidelityReport()
    for nodeid in ids:
        result = results[nodeid.partition("::")[0]]
        assert isinstance(result, PytestResult)
        record = next((r for r in result.records if r.nodeid == nodeid), None)
        if record is not None:
            sandbox = record.outcome.value
            cause = f"{record.error_type or ''}: {record.message}".strip(": ")
        else:
            sandbox = result.status.value
            tail = (result.stderr_tail.strip().splitlines() or [""])[-1]
            cause = "; ".join(x for x in (result.detail, tail) if x)
        report.rows.append(
            IdiomRow(_idiom_of(nodeid) or nodeid, nodeid, host[nodeid][0], sandbox, cause[:300])
        )
    return report
