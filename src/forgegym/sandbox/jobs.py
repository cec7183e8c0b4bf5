"""The runner's contract: jobs the trusted parent sends, results it decides.

Everything here is plain data (pydantic v2) so jobs can cross process boundaries
(fork-server pipes, Ray). A result is decided by the parent from what the child
reported *and* how it ended: only complete per-test records followed by the
end-of-run sentinel count; anything else reads as failure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "CallJob",
    "CallOutcome",
    "CallResult",
    "CallSpec",
    "INI_OPTION_KEYS",
    "Frame",
    "Job",
    "PytestJob",
    "ProjectRun",
    "PytestResult",
    "Result",
    "RunStatus",
    "pristine_manifest",
    "SetupHook",
    "TestOutcome",
    "TestRecord",
    "WatchRecord",
]

#: pytest ini keys a job may override: how tests are found and what a test run assumes,
#: never plugins, addopts or paths outside the job.
INI_OPTION_KEYS = frozenset(
    {
        "python_files",
        "python_classes",
        "python_functions",
        "usefixtures",
        "filterwarnings",
        "xfail_strict",
        "empty_parameter_set_mark",
    }
)

JSONValue = Any  # JSON-compatible builtins only: None, bool, int, float, str, list, dict[str, ...]


class RunStatus(str, Enum):
    """How a child run ended, as observed by the parent."""

    COMPLETED = "completed"  # sentinel received, collected ids as expected
    TIMEOUT = "timeout"  # wall or CPU limit hit; the process tree was killed
    CRASHED = "crashed"  # exited without the sentinel (os._exit, signal, segfault, ...)
    COLLECTION_ERROR = "collection_error"  # pytest could not collect/import the targets
    ID_MISMATCH = "id_mismatch"  # collected ids differ from the expected set
    OUTPUT_LIMIT = "output_limit"  # the child wrote more than the output limit
    INTERNAL_ERROR = "internal_error"  # the harness itself failed (a forgegym bug)


class TestOutcome(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # setup/teardown error
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    MISSING = "missing"  # expected but never reported

    __test__ = False  # not a pytest test class


# The pydantic mypy plugin's synthesised __init__ ends in **kwargs (extra keys are allowed),
# so a field named ``kwargs`` reads to mypy as a redefinition of the class; the model is fine.
class SetupHook(BaseModel):  # type: ignore[no-redef]
    """A *trusted* callable from the forgegym package run in the child before the tests
    (chaos injection, seeding). ``target`` is ``"module:function"``; kwargs are JSON."""

    model_config = ConfigDict(frozen=True)

    target: str
    kwargs: dict[str, JSONValue] = Field(default_factory=dict)


class ProjectRun(BaseModel):
    """How a user's repository runs, decided by the trusted parent from the repository as
    it was before the episode (never from the agent's copy): its own pytest configuration,
    its import roots and its cached test dependencies."""

    model_config = ConfigDict(frozen=True)

    config_name: str | None = Field(
        default=None,
        description="The basename of the project's pytest configuration file (pytest.ini, "
        "pyproject.toml, tox.ini, setup.cfg); None: the trusted default ini.",
    )
    config_text: str = Field(default="", description="That file's pristine text.")
    addopts: list[str] = Field(
        default_factory=list,
        description="The project's addopts, reduced to core pytest options (plugins that are "
        "not loaded, coverage, parallelism, stop-early and cache options are dropped).",
    )
    import_paths: list[str] = Field(
        default_factory=list,
        description="Import roots relative to the workdir (``src`` for a src layout, the "
        "``pythonpath`` setting), put on sys.path after the workdir.",
    )
    site_dirs: list[str] = Field(
        default_factory=list,
        description="Absolute directories of the cached dependency environment: bound "
        "read-only into the sandbox and appended to sys.path.",
    )

    @field_validator("config_name")
    @classmethod
    def _known_config(cls, value: str | None) -> str | None:
        allowed = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
        if value is not None and value not in allowed:
            raise ValueError(f"config_name: expected one of {allowed}, got {value!r}")
        return value

    @field_validator("import_paths")
    @classmethod
    def _relative_paths(cls, value: list[str]) -> list[str]:
        for path in value:
            parts = path.split("/")
            if not path or path.startswith("/") or any(p in ("", "..") for p in parts):
                raise ValueError(f"import_paths: {path!r} is not a relative path")
        return value

    @field_validator("site_dirs")
    @classmethod
    def _absolute_dirs(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path.startswith("/") or ".." in path.split("/"):
                raise ValueError(f"site_dirs: {path!r} is not an absolute path")
        return value


def pristine_manifest(
    files: Mapping[str, str], data_files: Mapping[str, bytes] | None = None
) -> dict[str, str]:
    """``{path: sha256 hex}`` of files as a workspace writes them (UTF-8 text, and the
    read-only ``data_files`` by their bytes), for ``PytestJob.pristine``: the task's own
    files as the episode started. A text file of the same path as a data file wins, as
    it does in the workspace's copies."""
    out: dict[str, str] = {
        path: hashlib.sha256(bytes(content)).hexdigest()
        for path, content in (data_files or {}).items()
    }
    for path, content in files.items():
        try:
            out[path] = hashlib.sha256(content.encode("utf-8")).hexdigest()
        except UnicodeEncodeError:
            out.pop(path, None)
            continue  # not written as text: never trusted
    return out


class PytestJob(BaseModel):
    """Run pytest on files in ``workdir`` (an absolute path the parent prepared)."""

    model_config = ConfigDict(frozen=True)

    kind: str = "pytest"
    workdir: str
    targets: list[str] = Field(min_length=1, description="Test files or node ids, relative.")
    expected_ids: list[str] | None = Field(
        default=None, description="If set, the collected ids must equal this set."
    )
    order: list[str] | None = Field(
        default=None,
        description="Run the collected items in this order; an id may repeat "
        "(run twice in one process). Ids not listed are not run.",
    )
    timeout_s: float = Field(default=10.0, gt=0)
    cpu_limit_s: float | None = Field(default=None, gt=0)
    memory_limit_mb: int = Field(default=1024, gt=0)
    env: dict[str, str] = Field(
        default_factory=dict, description="Extra environment (TZ, LANG, ...), set in the child."
    )
    python_hash_seed: int | None = Field(default=None, ge=0, le=4294967295)
    setup_hooks: list[SetupHook] = Field(default_factory=list)
    output_limit_bytes: int = Field(default=1_000_000, gt=0)
    runtime_policy: bool = Field(
        default=True,
        description="Install the child's runtime policy (audit hooks refusing introspection, "
        "forks and dynamic code to code under test). Off only to test the process-tree "
        "containment beneath it.",
    )
    pristine: dict[str, str] = Field(
        default_factory=dict,
        description="Provenance: ``{relative path: sha256 hex}`` of the files of ``workdir`` "
        "that are the task's pristine project (tests, modules the agent did not change). The "
        "runtime policy trusts code compiled from exactly those bytes, as it trusts the "
        "standard library and installed dependencies; every other file of the workdir (what "
        "the agent changed or added) and code compiled from text are untrusted. Decided by "
        "the parent from the pristine copy, never from the agent's files.",
    )
    conftest: bool = Field(
        default=False,
        description="Load the workdir's conftest.py files (default: --noconftest). Only for "
        "a caller that vouches for them (e.g. a user's repository as it was, checked "
        "for hooks the agent added).",
    )
    ini_options: dict[str, str] = Field(
        default_factory=dict,
        description="Overrides of the trusted ini (-o key=value), for the keys in "
        "INI_OPTION_KEYS only (collection patterns, filterwarnings, usefixtures, ...).",
    )
    watch: bool = Field(
        default=False,
        description="Watch every test call in the trusted harness "
        "(forgegym.sandbox.watch): entries into the test function, lines of its file "
        "that ran, exceptions its frames went on after, chaos seams re-armed before "
        "and checked during and after the call; each record then carries a WatchRecord.",
    )

    project: ProjectRun | None = Field(
        default=None,
        description="A user's repository: its pristine pytest configuration replaces the "
        "trusted ini, plus import roots and read-only dependency directories.",
    )

    @field_validator("ini_options")
    @classmethod
    def _known_ini_keys(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(value) - INI_OPTION_KEYS)
        if unknown:
            raise ValueError(
                f"ini_options: keys {unknown} are not allowed ({sorted(INI_OPTION_KEYS)})"
            )
        return value


class Frame(BaseModel):
    """One traceback frame (file relative to the workdir where possible)."""

    path: str
    line: int
    function: str


class WatchRecord(BaseModel):
    """What the trusted watch saw during one test call (``PytestJob.watch``)."""

    #: Times the test function's code was entered during its call (1: no retry).
    entries: int = 0
    #: Distinct lines of the test's file that ran during the call.
    lines: list[int] = Field(default_factory=list)
    #: ``(exception type, line it surfaced on, line the frame resumed at)`` for each
    #: exception a frame of the test file went on running after.
    handled: list[tuple[str, int, int]] = Field(default_factory=list)
    #: The first chaos seam found changed in this run (sticky), else ``None``.
    tamper: str | None = None


class TestRecord(BaseModel):
    __test__ = False

    nodeid: str
    outcome: TestOutcome
    duration_s: float = 0.0
    error_type: str | None = None
    message: str = ""
    frames: list[Frame] = Field(default_factory=list)
    #: The watch of the call (``PytestJob.watch`` jobs; ``None`` otherwise or if missing).
    watch: WatchRecord | None = None


class PytestResult(BaseModel):
    status: RunStatus
    records: list[TestRecord] = Field(default_factory=list)
    collected_ids: list[str] = Field(default_factory=list)
    expected_ids: list[str] | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    wall_s: float = 0.0
    cpu_s: float = Field(default=0.0, description="User+system CPU of the child tree (rusage).")
    max_rss_kb: int = 0
    detail: str = ""
    residue: str | None = Field(
        default=None,
        description="What the run left behind that could not be removed (None: nothing).",
    )
    fault: str | None = Field(
        default=None,
        description="A fault of the grading machinery, not of the code under test (the "
        "sandbox did not start, its zygote died under it twice on different zygotes, ...): "
        "the run says nothing about the code and its reward is invalid. None: no fault.",
    )

    @property
    def verdicts(self) -> dict[str, bool]:
        """nodeid -> passed. Only a COMPLETED run can pass anything; skip/xfail is not a pass.
        For repeated ids, a test passes only if every repetition passed."""
        ids = self.expected_ids if self.expected_ids is not None else self.collected_ids
        verdict = {nodeid: False for nodeid in ids}
        if self.status is not RunStatus.COMPLETED:
            return verdict
        seen: dict[str, bool] = {}
        for record in self.records:
            ok = record.outcome is TestOutcome.PASSED
            seen[record.nodeid] = seen.get(record.nodeid, True) and ok
        for nodeid in verdict:
            verdict[nodeid] = seen.get(nodeid, False)
        return verdict

    @property
    def pass_rate(self) -> float:
        verdicts = self.verdicts
        return sum(verdicts.values()) / len(verdicts) if verdicts else 0.0

    @property
    def all_passed(self) -> bool:
        verdicts = self.verdicts
        return bool(verdicts) and all(verdicts.values())


class CallSpec(BaseModel):  # type: ignore[no-redef]  # a field named kwargs, see SetupHook
    """Call ``target`` (``"module:qualname"``, importable from the workdir or a trusted
    forgegym driver) with JSON arguments."""

    model_config = ConfigDict(frozen=True)

    target: str
    args: list[JSONValue] = Field(default_factory=list)
    kwargs: dict[str, JSONValue] = Field(default_factory=dict)


class CallJob(BaseModel):
    """Differential execution: the child calls functions and returns JSON-plain values;
    the parent compares them with the reference's outputs, which never enter the child."""

    model_config = ConfigDict(frozen=True)

    kind: str = "calls"
    workdir: str
    calls: list[CallSpec] = Field(min_length=1)
    timeout_s: float = Field(default=10.0, gt=0)
    per_call_timeout_s: float = Field(default=2.0, gt=0)
    cpu_limit_s: float | None = Field(default=None, gt=0)
    memory_limit_mb: int = Field(default=1024, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    setup_hooks: list[SetupHook] = Field(default_factory=list)
    output_limit_bytes: int = Field(default=4_000_000, gt=0)
    runtime_policy: bool = Field(
        default=True,
        description="Install the child's runtime policy (audit hooks refusing introspection, "
        "forks and dynamic code to code under test). Off only to test the process-tree "
        "containment beneath it.",
    )
    pristine: dict[str, str] = Field(
        default_factory=dict,
        description="Provenance: ``{relative path: sha256 hex}`` of the files of ``workdir`` "
        "that are the task's pristine project (tests, modules the agent did not change). The "
        "runtime policy trusts code compiled from exactly those bytes, as it trusts the "
        "standard library and installed dependencies; every other file of the workdir (what "
        "the agent changed or added) and code compiled from text are untrusted. Decided by "
        "the parent from the pristine copy, never from the agent's files.",
    )
    # A real project's calls (behaviour checks of the real bank): its import roots and
    # read-only dependency directories, as a PytestJob's; its pytest settings are unused.
    project: ProjectRun | None = None
    python_hash_seed: int | None = Field(default=None, ge=0, le=4294967295)


class CallOutcome(BaseModel):
    ok: bool
    value: JSONValue = None
    error_type: str | None = None
    message: str = ""


class CallResult(BaseModel):
    status: RunStatus
    outcomes: list[CallOutcome] = Field(default_factory=list)
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_kb: int = 0
    stderr_tail: str = ""
    detail: str = ""
    residue: str | None = Field(
        default=None,
        description="What the run left behind that could not be removed (None: nothing).",
    )
    fault: str | None = Field(
        default=None,
        description="A fault of the grading machinery, not of the code under test (the "
        "sandbox did not start, its zygote died under it twice on different zygotes, ...): "
        "the run says nothing about the code and its reward is invalid. None: no fault.",
    )

    def outcome(self, index: int) -> CallOutcome:
        """The outcome of call ``index``; a missing one (crash, timeout) is a failure."""
        if self.status is RunStatus.COMPLETED and index < len(self.outcomes):
            return self.outcomes[index]
        return CallOutcome(ok=False, error_type=self.status.value, message=self.detail)


Job = PytestJob | CallJob
Result = PytestResult | CallResult
