"""``forgegym tasks verify``: validate tasks (reference high, start fails, no-op low, hacks <= no-op)."""

from __future__ import annotations

import argparse
import json
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from forgegym.cli.common import (
    CLIError,
    advance_progress,
    checked_env_ids,
    make_console,
    make_progress,
    one_line,
    parse_kwargs,
)

__all__ = ["cmd_tasks_build", "cmd_tasks_verify"]


def cmd_tasks_verify(args: argparse.Namespace) -> int:

    from forgegym.play.verify import verify_tasks

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
