"""The parent's reading of a finished run: the report stream, the worker's exit and the
limits hit, turned into a :class:`~forgegym.sandbox.jobs.Result`.

Everything the child wrote is the child's: a report whose content makes any part of the
reading raise is the code's crash, never a machine fault (docs/design/004, D5).
"""

from __future__ import annotations

import contextlib
import os
import signal
import warnings
from typing import TYPE_CHECKING, Any

from forgegym.sandbox.jobs import (
    CallOutcome,
    CallResult,
    Frame,
    Job,
    PytestJob,
    PytestResult,
    Result,
    RunStatus,
    TestOutcome,
    TestRecord,
    WatchRecord,
)
from forgegym.sandbox.protocol import read_report

if TYPE_CHECKING:
    from forgegym.sandbox.runners.streams import Control, Streams

__all__ = ["MAX_VALUE_DEPTH", "WALL_TIMEOUT", "decide", "describe_status"]

#: How a wall-clock time-out's detail starts (:func:`decide`); a CPU-limit time-out is
#: always the code's (it used the CPU).
WALL_TIMEOUT = "wall time limit"


def _parse_report(data: bytes) -> tuple[list[dict[str, Any]], str | None]:
    """Protocol lines; second item is a reason if the stream is malformed, unauthenticated
    or reports tampering (see :func:`forgegym.sandbox.protocol.read_report`)."""
    return read_report(data)


def describe_status(status: int | None) -> str:
    if status is None:
        return "worker status unknown"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"worker killed by {name}"
    return f"worker exited with code {os.waitstatus_to_exitcode(status)}"


def decide(
    job: Job,
    control: Control,
    streams: Streams,
    timed_out: bool,
    exceeded: bool,
    wall_s: float,
) -> Result:
    """The trusted verdict on how the run ended.

    Everything the child wrote is the child's: a report whose content makes any part of
    this reading raise (``inf`` where an int belongs, nesting past the recursion limit,
    a list where a dict belongs) is the code's crash, never a machine fault. Only the
    parent's own machinery may produce a fault (``reward_valid`` False), so code cannot
    turn its failure into an invalid, skipped reward."""
    try:
        return _decide(job, control, streams, timed_out, exceeded, wall_s)
    except Exception as exc:  # noqa: BLE001 - hostile child data, read as a crash
        detail = f"malformed report data ({type(exc).__name__})"
        common: dict[str, Any] = {
            "wall_s": wall_s,
            "cpu_s": control.cpu_s,
            "max_rss_kb": control.max_rss_kb,
            "residue": control.residue,
        }
        if isinstance(job, PytestJob):
            return PytestResult(
                status=RunStatus.CRASHED,
                expected_ids=job.expected_ids,
                stdout_tail=streams.tail("out"),
                stderr_tail=streams.tail("err"),
                detail=detail,
                **common,
            )
        return CallResult(
            status=RunStatus.CRASHED, stderr_tail=streams.tail("err"), detail=detail, **common
        )


def _decide(
    job: Job,
    control: Control,
    streams: Streams,
    timed_out: bool,
    exceeded: bool,
    wall_s: float,
) -> Result:
    lines, malformed = _parse_report(bytes(streams.report))
    status = control.worker_status
    end_idx = next((i for i, obj in enumerate(lines) if obj.get("t") == "end"), None)
    end = lines[end_idx] if end_idx is not None else None
    internal = next((obj for obj in lines if obj.get("t") == "internal"), None)
    cpu_limit = job.cpu_limit_s or (job.timeout_s + 1.0)

    verdict: RunStatus
    detail = control.detail
    if timed_out:
        verdict, detail = RunStatus.TIMEOUT, f"{WALL_TIMEOUT} {job.timeout_s:g}s exceeded"
    elif exceeded:
        verdict, detail = RunStatus.OUTPUT_LIMIT, f"output over {job.output_limit_bytes} bytes"
    elif (
        status is not None
        and os.WIFSIGNALED(status)
        and (
            os.WTERMSIG(status) == signal.SIGXCPU
            or (os.WTERMSIG(status) == signal.SIGKILL and control.cpu_s >= cpu_limit)
        )
    ):
        verdict, detail = RunStatus.TIMEOUT, f"CPU time limit {cpu_limit:g}s exceeded"
    elif internal is not None:
        verdict, detail = RunStatus.INTERNAL_ERROR, str(internal.get("message", ""))[:4000]
    elif status is None or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        verdict, detail = RunStatus.CRASHED, detail or describe_status(status)
    elif malformed:
        verdict, detail = RunStatus.CRASHED, malformed
    elif end is None:
        verdict, detail = RunStatus.CRASHED, "no end-of-run sentinel"
    elif end_idx != len(lines) - 1:
        verdict, detail = RunStatus.CRASHED, "data after the end-of-run sentinel"
    else:
        verdict = RunStatus.COMPLETED

    common = {
        "wall_s": wall_s,
        "cpu_s": control.cpu_s,
        "max_rss_kb": control.max_rss_kb,
        "residue": control.residue,
    }
    if control.residue:
        warnings.warn(
            f"a sandboxed run left something that could not be removed: {control.residue}",
            RuntimeWarning,
            stacklevel=2,
        )
    if isinstance(job, PytestJob):
        records = [_record(obj) for obj in lines if obj.get("t") == "test"]
        collected = [str(x) for x in (end or {}).get("collected", [])]
        if verdict is RunStatus.COMPLETED and end is not None:
            exitstatus = end.get("exitstatus")
            if end.get("collection_errors"):
                verdict = RunStatus.COLLECTION_ERROR
                detail = "\n".join(str(x) for x in end["collection_errors"])[:4000]
            elif exitstatus not in (0, 1, 5):
                verdict, detail = RunStatus.CRASHED, f"pytest exit status {exitstatus}"
            elif len(records) != end.get("ran"):
                verdict, detail = RunStatus.CRASHED, "records do not match the tests run"
            elif job.expected_ids is not None and set(collected) != set(job.expected_ids):
                verdict = RunStatus.ID_MISMATCH
                missing = sorted(set(job.expected_ids) - set(collected))
                extra = sorted(set(collected) - set(job.expected_ids))
                detail = f"missing {missing[:20]}, unexpected {extra[:20]}"
        return PytestResult(
            status=verdict,
            records=records,
            collected_ids=collected,
            expected_ids=job.expected_ids,
            stdout_tail=streams.tail("out"),
            stderr_tail=streams.tail("err"),
            detail=detail,
            **common,
        )
    outcomes: list[CallOutcome] = []
    calls = [obj for obj in lines if obj.get("t") == "call"]
    if verdict is RunStatus.COMPLETED and (
        end is None
        or end.get("n") != len(job.calls)
        or [c.get("index") for c in calls] != list(range(len(job.calls)))
    ):
        verdict, detail = RunStatus.CRASHED, "call outcomes incomplete"
    for obj in calls:
        if obj.get("ok") is True and _shallow(obj.get("value")):
            outcomes.append(CallOutcome(ok=True, value=obj.get("value")))
        elif obj.get("ok") is True:  # the parent's comparisons recurse: bound the depth
            outcomes.append(
                CallOutcome(ok=False, error_type="ValueTooDeep", message="value nested too deep")
            )
        else:
            outcomes.append(
                CallOutcome(
                    ok=False,
                    error_type=str(obj.get("error_type") or "Error"),
                    message=str(obj.get("message") or ""),
                )
            )
    return CallResult(
        status=verdict,
        outcomes=outcomes,
        stderr_tail=streams.tail("err"),
        detail=detail,
        **common,
    )


#: The deepest value a call outcome may carry (the parent compares values recursively).
MAX_VALUE_DEPTH = 100


def _shallow(value: Any, limit: int = MAX_VALUE_DEPTH) -> bool:
    """Whether ``value`` (decoded JSON) nests no deeper than ``limit``, without recursion."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return True


def _record(obj: dict[str, Any]) -> TestRecord:
    try:
        outcome = TestOutcome(obj.get("outcome"))
    except ValueError:
        outcome = TestOutcome.ERROR
    frames = []
    for fr in obj.get("frames") or []:
        with contextlib.suppress(Exception):
            frames.append(
                Frame(path=str(fr["path"]), line=int(fr["line"]), function=str(fr["function"]))
            )
    return TestRecord(
        nodeid=str(obj.get("nodeid", "")),
        outcome=outcome,
        duration_s=float(obj.get("duration_s") or 0.0),
        error_type=None if obj.get("error_type") is None else str(obj["error_type"]),
        message=str(obj.get("message") or "")[:4000],
        frames=frames,
        watch=_watch_record(obj.get("watch")),
    )


def _watch_record(obj: Any) -> WatchRecord | None:
    """The watch fields of a record (bounded; malformed reads as no record)."""
    if not isinstance(obj, dict):
        return None
    try:
        return WatchRecord(
            entries=int(obj.get("entries") or 0),
            lines=[int(x) for x in (obj.get("lines") or [])[:20_000]],
            handled=[
                (str(h[0])[:80], int(h[1]), int(h[2])) for h in (obj.get("handled") or [])[:50]
            ],
            tamper=None if obj.get("tamper") is None else str(obj["tamper"])[:300],
        )
    except (TypeError, ValueError, IndexError, OverflowError, RecursionError):
        return None
