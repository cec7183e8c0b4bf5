"""What a build writes: each task's manifest entry (its bug report, difficulty
features and level), the manifest file, the project record and the build statistics."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst

from forgegym.tasklib.mutations import (
    SUBTLE_OPERATORS,
)

__all__ = [
    "GRADING_TIME_CAP_S",
    "LEVELS",
    "BuildStats",
    "difficulty_level",
    "grading_time_limit",
    "read_manifest",
    "read_project_record",
    "sdist_licence",
    "stats_table",
    "write_bank_files",
    "write_manifest",
]

#: Levels of the curriculum the factory's tasks use (as the generated bank's).
LEVELS = (1, 2, 3, 4)
#: The most a real task's test run may take (repository mode's default cap).
GRADING_TIME_CAP_S = 120.0


def grading_time_limit(record_limit_s: float, graded_files: int) -> float:
    """The wall limit of a real task's graded run: 10 s per test file it runs, at least
    the project record's measured limit, at most :data:`GRADING_TIME_CAP_S` (records of
    early builds measured the slowest file alone). The bank grades with it, and the
    factory confirms a composed task's reference under it."""
    return min(GRADING_TIME_CAP_S, max(float(record_limit_s), 10.0 * graded_files))


@dataclass
class BuildStats:
    """What one project's build did (the per-project row of docs/real_bank.md)."""

    project: str
    version: str
    tests: int = 0
    passing: int = 0
    flaky_or_failing: int = 0
    covered_functions: int = 0
    candidates: int = 0
    screened: int = 0
    killed: int = 0
    timeouts: int = 0
    equivalent: int = 0
    kept: int = 0
    confirmed: int = 0
    #: confirmed mutants dropped because their reference fails under grading's trust
    reference_refused: int = 0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    operators: dict[str, int] = field(default_factory=dict)

    @property
    def tasks_per_cpu_minute(self) -> float:
        return 60.0 * self.confirmed / self.cpu_seconds if self.cpu_seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tasks_per_cpu_minute"] = round(self.tasks_per_cpu_minute, 2)
        data["keep_share"] = round(self.confirmed / self.screened, 4) if self.screened else 0.0
        return data


def _bare(node: cst.FunctionDef) -> str:
    """A definition's text without its decorators (what the screen compiles)."""
    return cst.Module(body=[node.with_changes(decorators=[], leading_lines=[])]).code


def _docstring(fn: cst.FunctionDef) -> str:
    doc = fn.get_docstring()
    return doc.strip().splitlines()[0] if doc else ""


def difficulty_level(features: dict[str, Any]) -> int:
    """Curriculum level 1-4 from the task's features: fewer failing tests, a subtle
    operator, a longer function and a test far from the function each make it harder."""
    score = 0
    score += features["n_fail"] <= 2
    score += features["operator"] in SUBTLE_OPERATORS
    score += features["function_lines"] > 15
    score += features["distance"] > 0
    return min(LEVELS[-1], 1 + score)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
#: ``id()`` values (a ``deepcopy`` memo in a traceback's locals): 14 digits and more
_OBJECT_ID = re.compile(r"(?<![\w.])\d{14,}(?![\w.])")


def _stable(text: str) -> str:
    """A failure's text without what differs from run to run (object addresses and ids):
    the report and the equivalence signature must not depend on the run."""
    return _OBJECT_ID.sub("<id>", _ADDRESS.sub(" at 0x...", text))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _report(project: str, path: str, function: str, doc: str, shown: dict[str, str]) -> str:
    parts = [
        f"Users of {project} report that `{function}` no longer behaves as documented"
        + (f' ("{doc}").' if doc else ".")
    ]
    parts.append("These tests fail:\n")
    for test_id, text in shown.items():
        parts.append(f"{test_id}\n```\n{text.strip()[-1200:]}\n```")
    parts.append(
        "Fix the code so they pass without breaking the tests that pass now. "
        "Other tests may check the same behaviour. The test files are read-only."
    )
    return "\n".join(parts)


def _is_test_id(test_id: str) -> bool:
    name = Path(test_id.split("::", 1)[0]).name
    return (
        "::" in test_id
        and name.endswith(".py")
        and (name.startswith("test_") or name.endswith("_test.py"))
    )


def _distance(source_path: str, test_id: str) -> int:
    stem = Path(source_path).stem
    test_file = Path(test_id.split("::", 1)[0]).stem
    return 0 if stem in test_file or test_file.removeprefix("test_") in stem else 1


def _error_lines(text: str) -> str:
    """A failure's ``E`` lines (the assertion and its values), else its last line: what
    tells two mutants' failures of the same test apart."""
    lines = [line.strip() for line in text.splitlines() if line.startswith("E ")]
    return "\n".join(lines)[:400] if lines else _last_line(text)


def _entry(
    item: dict[str, Any],
    f2p: list[str],
    p2p: list[str],
    modules: list[str],
    project: str,
    version: str,
    sha256: str,
    shown: dict[str, str],
) -> dict[str, Any]:
    path, mutation = item["path"], item["mutation"]
    original: cst.FunctionDef = item["original"]
    fn_lines = len(cst.Module(body=[original]).code.strip().splitlines())
    features = {
        "n_fail": len(f2p),
        "operator": mutation.operator,
        "function_lines": fn_lines,
        "distance": min(_distance(path, t) for t in f2p),
    }
    ident = (
        f"real/{project}/{version}/{path}::{mutation.function}:{mutation.operator}:{mutation.site}"
    )
    return {
        "id": ident,
        "project": project,
        "version": version,
        "sha256": sha256,
        "file": path,
        "mutation": mutation.to_json(),
        "shown": sorted(shown),
        "f2p": f2p,
        "p2p": p2p,
        "report": _report(project, path, mutation.function, _docstring(original), shown),
        "features": features,
        "modules": modules,
        "level": difficulty_level(features),
    }


def write_manifest(path: Path, entries: Sequence[dict[str, Any]]) -> None:
    """JSON lines (gzip when ``path`` ends in ``.gz``, with a fixed mtime: reproducible)."""
    data = "".join(json.dumps(e, sort_keys=True) + "\n" for e in entries).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        with (
            path.open("wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out,
        ):
            out.write(data)
    else:
        path.write_bytes(data)


def read_manifest(path: Path) -> list[dict[str, Any]]:
    """The entries of a manifest written by :func:`write_manifest`."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]


def write_bank_files(
    out_dir: Path,
    entries: Sequence[dict[str, Any]],
    stats: BuildStats,
    record: dict[str, Any],
    *,
    sdist: str = "",
) -> None:
    """A project's three bank files: manifest, project record, build statistics."""
    name, version = record["project"], record["version"]
    out_dir.mkdir(parents=True, exist_ok=True)
    write_manifest(out_dir / f"{name}-{version}.jsonl.gz", entries)
    (out_dir / f"{name}-{version}.project.json").write_text(
        json.dumps(record, indent=1, sort_keys=True) + "\n"
    )
    (out_dir / f"{name}-{version}.stats.json").write_text(
        json.dumps(
            {**stats.to_json(), "sha256": record["sha256"], "seed": record["seed"], "sdist": sdist},
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )


def sdist_licence(root: Path) -> str:
    """The licence a project's sdist declares (``PKG-INFO``: ``License-Expression``, a
    short ``License`` field, else the ``License ::`` classifiers), ``""`` when none."""
    from email.parser import Parser

    path = root / "PKG-INFO"
    if not path.is_file():
        return ""
    meta = Parser().parsestr(path.read_text(encoding="utf-8", errors="replace"), headersonly=True)
    expression = (meta.get("License-Expression") or "").strip()
    if expression:
        return expression
    field_text = (meta.get("License") or "").strip()
    if field_text and "\n" not in field_text and len(field_text) <= 60 and field_text != "UNKNOWN":
        return field_text
    classifiers = [
        c.split("::")[-1].strip()
        for c in meta.get_all("Classifier") or []
        if c.startswith("License ::") and c.split("::")[-1].strip() != "OSI Approved"
    ]
    return " OR ".join(classifiers)


def read_project_record(folder: Path, project: str, version: str) -> dict[str, Any]:
    """The ``<project>-<version>.project.json`` record written beside its manifest."""
    path = folder / f"{project}-{version}.project.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the project record of {project}=={version} is missing")
    return json.loads(path.read_text())


def stats_table(out_dir: Path) -> str:
    """The per-project Markdown table of a bank folder's ``*.stats.json`` files."""
    rows = [
        "| project | version | tests passing (sandbox twice, host) | covered functions | screened | "
        "killed | equivalent | timeouts | confirmed tasks | keep share | CPU s | "
        "tasks / CPU-min |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    total_tasks = total_cpu = 0.0
    for path in sorted(out_dir.glob("*.stats.json")):
        s = json.loads(path.read_text())
        total_tasks += s["confirmed"]
        total_cpu += s["cpu_seconds"]
        rows.append(
            f"| {s['project']} | {s['version']} | {s['passing']}/{s['tests']} | "
            f"{s['covered_functions']} | {s['screened']} | {s['killed']} | {s['equivalent']} | "
            f"{s['timeouts']} | {s['confirmed']} | {s['keep_share']:.0%} | "
            f"{s['cpu_seconds']:.0f} | {s['tasks_per_cpu_minute']:.1f} |"
        )
    rate = 60 * total_tasks / total_cpu if total_cpu else 0.0
    rows.append(
        f"| **all** | | | | | | | | **{int(total_tasks)}** | | {total_cpu:.0f} | {rate:.1f} |"
    )
    return "\n".join(rows) + "\n"
