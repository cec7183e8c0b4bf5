"""``forgegym tasks verify``: validate tasks (reference high, start fails, no-op low, hacks <= no-op)."""

from __future__ import annotations

import argparse
import json
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass
from forgegym.cli.common import (
    CLIError,
    Commands,
    advance_progress,
    checked_env_ids,
    int_at_least,
    make_console,
    make_progress,
    one_line,
    parse_kwargs,
)

__all__ = [
    "add_parser",
    "cmd_tasks_build",
    "cmd_tasks_compose",
    "cmd_tasks_revert",
    "cmd_tasks_verify",
]


def add_parser(sub: Commands) -> None:
    """Add ``tasks`` and its subcommands ``verify``, ``build``, ``compose`` and ``revert``
    with their options to the ``forgegym`` parser."""
    p = sub.add_parser(
        "tasks",
        help="task validation",
        description="Task validation (see `forgegym tasks verify --help`).",
    )
    tasks_sub = p.add_subparsers(dest="tasks_command", required=True, metavar="COMMAND")
    v = tasks_sub.add_parser(
        "verify",
        help="reference high, start fails, noop low, hacks <= noop",
        description="Grade tasks drawn from each bank: the reference must score high, "
        "the starting state fail, the no-op score low and every known hack no more than "
        "the no-op. Exits 1 when a task is invalid.",
    )
    v.add_argument(
        "--env",
        action="append",
        metavar="ID",
        help="environment id, repeatable (default: every registered id)",
    )
    v.add_argument(
        "--limit", type=int_at_least(1), default=50, help="tasks to grade per environment"
    )
    v.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the task draw")
    v.add_argument(
        "--offset",
        type=int_at_least(0),
        default=0,
        help="skip the first N tasks of the seed's order (chunks)",
    )
    v.add_argument(
        "--skip-partial",
        action="store_true",
        help="do not grade the family's partial fix (reported only, never a validity check)",
    )
    v.add_argument(
        "--env-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="keyword argument of gym.make, repeatable (e.g. bank=real)",
    )
    v.add_argument("--json", action="store_true", help="print a JSON summary")
    v.set_defaults(func=cmd_tasks_verify)
    b = tasks_sub.add_parser(
        "build",
        help="build validated Bugfix tasks from real projects (the task factory)",
        description="Fetch pinned sdists (or take a repository), install their test "
        "dependencies, keep the tests that pass twice in the sandbox, map tests to the "
        "functions and methods they run, mutate those and keep the mutants that break tests "
        "(screened in one process, confirmed in the sandbox as grading runs them). Writes a "
        "<project>-<version>.jsonl.gz manifest, a .project.json record and a .stats.json "
        "file per project.",
    )
    src = b.add_mutually_exclusive_group(required=True)
    src.add_argument("--from-pypi", nargs="+", metavar="NAME==VERSION", help="pinned sdists")
    src.add_argument("--repo", metavar="PATH", help="a project folder (name-version from --name)")
    b.add_argument("--name", metavar="NAME==VERSION", help="project pin of --repo")
    b.add_argument("--out", default="real-bank", metavar="DIR", help="manifest folder")
    b.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the mutant draw")
    b.add_argument(
        "--python",
        metavar="PATH",
        help="host interpreter of the coverage and screen runs (default: this one)",
    )
    b.add_argument(
        "--with",
        dest="extra_requirements",
        action="append",
        default=[],
        metavar="REQUIREMENT",
        help="a test dependency the project does not declare (repeatable)",
    )
    b.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="sdist cache (default $FORGEGYM_SDIST_CACHE or ~/.cache/forgegym/sdists)",
    )
    b.add_argument(
        "--max-candidates", type=int_at_least(1), default=400, help="mutants screened per project"
    )
    b.add_argument("--max-tasks", type=int_at_least(1), default=250, help="tasks kept per project")
    b.add_argument(
        "--max-per-function",
        type=int_at_least(1),
        default=10,
        help="tasks kept per function or method (distinct failures only)",
    )
    b.add_argument(
        "--public-only",
        action="store_true",
        help="mutate public functions and methods only (the shipped bank's builds); by "
        "default private helpers and methods the tests cover are targets too",
    )
    b.set_defaults(func=cmd_tasks_build)
    _add_compose_parser(tasks_sub)
    _add_revert_parser(tasks_sub)


def _add_compose_parser(tasks_sub: Any) -> None:
    """``forgegym tasks compose`` and its options."""
    c = tasks_sub.add_parser(
        "compose",
        help="compose two-bug tasks from a built bank's confirmed mutants",
        description="Pair a built bank's confirmed single mutants into tasks with two bugs "
        "(two sites of one function, two functions of one module, two modules), run each "
        "pair's tests in the sandbox as grading does and keep those whose tests fail. "
        "Writes <project>-<version>.multi.jsonl.gz and .multi.json beside each manifest; "
        "the folder then serves both (bank=DIR).",
    )
    c.add_argument("bank", metavar="DIR", help="a folder built by `forgegym tasks build`")
    c.add_argument(
        "--per-kind", type=int_at_least(1), default=10, help="tasks kept per kind per project"
    )
    c.add_argument(
        "--kinds",
        nargs="+",
        default=None,
        metavar="KIND",
        help="mutants_function, mutants_module, mutants_cross (default: all three)",
    )
    c.add_argument("--project", action="append", default=[], help="only this project (repeatable)")
    c.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the pair draw")
    c.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="sdist cache (default: the bank's own, else $FORGEGYM_SDIST_CACHE or "
        "~/.cache/forgegym/sdists)",
    )
    c.add_argument(
        "--confirm-only",
        action="store_true",
        help="compose nothing: confirm the folder's composed tasks in place (each "
        "reference run as grading runs it must pass; the others are dropped)",
    )
    c.set_defaults(func=cmd_tasks_compose)


def _add_revert_parser(tasks_sub: Any) -> None:
    """``forgegym tasks revert`` and its options."""
    r = tasks_sub.add_parser(
        "revert",
        help="tasks that revert a real upstream fix, from a built bank's earlier releases",
        description="For each project of a built bank, put back one function as an earlier "
        "release wrote it, when the changelog between the two releases mentions a fix, the "
        "difference is small and the pinned release's own tests fail on it (run in the "
        "sandbox as grading does). Writes <project>-<version>.reverted.jsonl.gz and "
        ".reverted.json beside each manifest; the folder then serves them (bank=DIR).",
    )
    r.add_argument("bank", metavar="DIR", help="a folder built by `forgegym tasks build`")
    r.add_argument(
        "--releases",
        type=int_at_least(1),
        default=3,
        help="earlier releases looked at per project (the newest before the pinned one)",
    )
    r.add_argument("--project", action="append", default=[], help="only this project (repeatable)")
    r.add_argument(
        "--max-runs",
        type=int_at_least(1),
        default=60,
        help="candidates run in the sandbox per project (the rest counted as over_cap)",
    )
    r.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="sdist cache (default: the bank's own, else $FORGEGYM_SDIST_CACHE or "
        "~/.cache/forgegym/sdists)",
    )
    r.set_defaults(func=cmd_tasks_revert)


def cmd_tasks_verify(args: argparse.Namespace) -> int:

    from forgegym.policies.verify import verify_tasks

    env_ids = checked_env_ids(args.env)  # before the progress bar
    summaries = []
    with make_progress(make_console(), disable=args.json) as progress:
        for env_id in env_ids:
            bar = progress.add_task(f"verify {env_id}", total=args.limit)
            summary = verify_tasks(
                env_id,
                limit=args.limit,
                seed=args.seed,
                offset=args.offset,
                partial=not args.skip_partial,
                env_kwargs=parse_kwargs(getattr(args, "env_kwarg", None)),
                on_task=partial(advance_progress, progress, bar),
            )
            summaries.append(summary)
    ok = all(s.valid == s.checked for s in summaries)
    if args.json:
        payload = [s.model_dump(mode="json") for s in summaries]
        print(json.dumps(payload[0] if len(payload) == 1 else payload, indent=2))
    else:
        from rich.table import Table

        table = Table(title="forgegym tasks verify")
        for column in (
            "env",
            "bank size",
            "checked",
            "valid",
            "reference score",
            "noop score",
            "hacks > noop",
        ):
            table.add_column(column)
        for s in summaries:
            table.add_row(
                s.env_id,
                str(s.bank_size),
                str(s.checked),
                str(s.valid),
                f"{s.reference_mean_score:.3f}",
                f"{s.noop_mean_score:.3f}",
                str(s.hacks_above_noop),
            )
        make_console().print(table)
        for s in summaries:
            for check in s.invalid[:20]:
                make_console().print(
                    f"[red]invalid[/red] {check.task_id}: {'; '.join(check.problems)}"
                )
    return 0 if ok else 1


def _pin(text: str) -> tuple[str, str]:
    name, sep, version = text.partition("==")
    if not sep or not name or not version:
        raise CLIError(f"expected NAME==VERSION (a pinned release), got {text!r}")
    return name, version


def cmd_tasks_build(args: argparse.Namespace) -> int:
    """``forgegym tasks build``: the real-code task factory, project by project."""
    import sys
    from pathlib import Path

    from forgegym.tasklib.factory import ColdCacheError, FactoryError, build_pinned
    from forgegym.tasklib.factory.build import build_project, write_bank_files

    console = make_console()
    out = Path(args.out)
    python = args.python or sys.executable
    options = {
        "max_candidates": args.max_candidates,
        "max_tasks": args.max_tasks,
        "max_per_function": args.max_per_function,
        "extra_requirements": list(args.extra_requirements),
        "private_targets": not args.public_only,
    }
    cache = Path(args.cache_dir) if args.cache_dir else None
    failed = 0
    if args.repo:
        if not args.name:
            raise CLIError("--repo needs --name NAME==VERSION (the manifest's project pin)")
        name, version = _pin(args.name)
        root = Path(args.repo)
        if not root.is_dir():
            raise CLIError(f"--repo {args.repo}: not a directory")
        try:
            entries, stats, record = build_project(
                root,
                project=name,
                version=version,
                sha256="",
                python=python,
                seed=args.seed,
                log=console.print,
                **options,
            )
        except (FactoryError, ValueError) as exc:
            raise CLIError(f"--repo {args.repo}: {one_line(str(exc))}") from None
        if not entries:
            raise CLIError(
                f"--repo {args.repo}: no task: no mutant of a function the tests cover broke "
                f"a test that passes ({stats.confirmed} confirmed of {stats.screened} mutants "
                "screened); nothing was written"
            )
        write_bank_files(out, entries, stats, record)
        console.print(json.dumps(stats.to_json()))
        return 0
    for pin in args.from_pypi:
        name, version = _pin(pin)
        if (out / f"{name}-{version}.stats.json").is_file():
            console.print(f"{pin}: already built in {out} (delete its files to rebuild)")
            continue
        # several builds may share one folder (one per core): a project is built once
        lock = out / f".{name}-{version}.building"
        out.mkdir(parents=True, exist_ok=True)
        if not _take_lock(lock):
            console.print(f"{pin}: another build is on it ({lock} exists)")
            continue
        try:
            stats = build_pinned(
                name,
                version,
                out,
                python=python,
                cache_dir=cache,
                seed=args.seed,
                log=console.print,
                **options,
            )
        except (ColdCacheError, FactoryError, ValueError) as exc:
            console.print(f"[red]{pin}: {exc}[/red]")
            failed += 1
            continue
        finally:
            lock.unlink(missing_ok=True)
        console.print(json.dumps(stats.to_json()))
    return 1 if failed else 0


def cmd_tasks_compose(args: argparse.Namespace) -> int:
    """``forgegym tasks compose DIR``: two-bug tasks from a built bank."""
    from forgegym.tasklib.factory import ColdCacheError
    from forgegym.tasklib.factory.compose import COMPOSED_KINDS, compose_bank, confirm_bank

    bank = Path(args.bank)
    if not bank.is_dir() or not any(bank.glob("*.project.json")):
        raise CLIError(f"{args.bank}: not a bank folder (no <project>-<version>.project.json)")
    kinds = tuple(args.kinds or COMPOSED_KINDS)
    unknown = [k for k in kinds if k not in COMPOSED_KINDS]
    if unknown:
        raise CLIError(f"--kinds: unknown {unknown}; expected some of {list(COMPOSED_KINDS)}")
    console = make_console()
    cache = Path(args.cache_dir) if args.cache_dir else None
    try:
        if args.confirm_only:
            done = confirm_bank(
                bank, projects=tuple(args.project), cache_dir=cache, log=console.print
            )
        else:
            done = compose_bank(
                bank,
                per_kind=args.per_kind,
                kinds=kinds,
                seed=args.seed,
                projects=tuple(args.project),
                cache_dir=cache,
                log=console.print,
            )
    except (ColdCacheError, ValueError, FileNotFoundError) as exc:
        raise CLIError(one_line(str(exc))) from None
    if not done:
        raise CLIError(f"{args.bank}: no project to compose (check --project)")
    for stats in done:
        console.print(json.dumps(stats.to_json()))
    return 0


def cmd_tasks_revert(args: argparse.Namespace) -> int:
    """``forgegym tasks revert DIR``: tasks that revert a real upstream fix."""
    from forgegym.tasklib.factory import ColdCacheError
    from forgegym.tasklib.factory.revert import revert_bank

    bank = Path(args.bank)
    if not bank.is_dir() or not any(bank.glob("*.project.json")):
        raise CLIError(f"{args.bank}: not a bank folder (no <project>-<version>.project.json)")
    console = make_console()
    try:
        done = revert_bank(
            bank,
            releases=args.releases,
            projects=tuple(args.project),
            cache_dir=Path(args.cache_dir) if args.cache_dir else None,
            max_runs=args.max_runs,
            log=console.print,
        )
    except (ColdCacheError, ValueError, FileNotFoundError, OSError) as exc:
        raise CLIError(one_line(str(exc))) from None
    if not done:
        raise CLIError(f"{args.bank}: no project to revert (check --project)")
    for stats in done:
        console.print(json.dumps(stats.to_json()))
    return 0


def _take_lock(lock: Path) -> bool:
    """Create ``lock`` holding this process's id; a lock whose process is gone (a build
    killed by a time limit never removes its own) is taken over. The lock appears whole
    (hard-linked from a written file), so a reader never sees it half-written."""
    mine = lock.with_name(f"{lock.name}.{os.getpid()}")
    mine.write_text(str(os.getpid()))
    try:
        for _ in range(2):
            try:
                os.link(mine, lock)
                return True
            except FileExistsError:
                try:
                    owner = int(lock.read_text())
                except (OSError, ValueError):
                    owner = 0
                if owner and _alive(owner):
                    return False
                lock.unlink(missing_ok=True)
        return False
    finally:
        mine.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        pass
    return True
