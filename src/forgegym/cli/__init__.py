"""The ``forgegym`` command.

::

    forgegym list                         # ids, families, task counts
    forgegym doctor                       # which sandbox isolation features are active here
    forgegym eval --policy reference      # env x policy x episodes; table + JSON results
    forgegym tasks verify --env ID --json # validate tasks (reference high, noop low, hacks <= noop)
    forgegym bench [--env ID] [--vector | --ray | --throughput]  # ratios / completions/s
    forgegym serve ENV_ID [--port 8000]   # OpenEnv-compatible server + dashboard at /
    forgegym plot episode RESULTS.json -o dash.png
    forgegym plot curriculum STATE.json -o curve.png

Every command iterates over the registered families (:mod:`forgegym.family`).

Errors: whatever a user can get wrong (an unknown id, policy or ``--env-kwarg``, an
output that is a directory, an unreachable LLM endpoint, a file of the wrong kind, a
missing extra) is checked before any work or progress bar and reported as one line on
stderr with exit status 2; an error met while working (``ValueError``, ``OSError``, a
failing LLM endpoint) is one line with status 1. ``FORGEGYM_TRACEBACK=1`` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import re
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from forgegym.play.results import Episode, Results

__all__ = ["CLIError", "build_parser", "main"]


class CLIError(Exception):
    """A user error: :func:`main` prints it as one line on stderr and exits with 2."""


# --------------------------------------------------------------- argparse setup
class _Formatter(argparse.HelpFormatter):
    """Shows every option's default; keeps multi-line descriptions as written.

    A default of ``None`` or ``False`` (a flag, or "every id") is not shown; help text
    that already says what its default is is left alone.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:  # laid out by hand (the examples)
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            not action.option_strings
            or "default" in text
            or default is None
            or default is False
            or default is argparse.SUPPRESS
        ):
            return text
        return f"{text} (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line (``main`` prints them), not usage + error."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise CLIError(f"{message} (see `{self.prog} --help`)")


def _int_at_least(low: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def _port(text: str) -> int:
    value = _int_at_least(0)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be a TCP port in [0, 65535], got {value}")
    return value  # type: ignore[no-any-return]


# --------------------------------------------------------------- shared checks
def _console() -> Any:
    from rich.console import Console

    # Piped output (CI logs, files) gets rich's 80 columns by default, which cuts env ids.
    return Console() if sys.stdout.isatty() else Console(width=140)


def _one_line(message: str) -> str:
    """A message as one line, without the ``argument:`` prefix library errors carry.

    forgegym's ``ValueError`` messages start with the Python argument they name
    (``"name: unknown policy 'x'"``); at the command line that name is noise.
    """
    text = " ".join(str(message).split())
    return re.sub(r"^[a-z_][a-z0-9_]*: (?=\S)", "", text)


def _env_ids(requested: Sequence[str] | None) -> list[str]:
    from forgegym.family.registration import env_ids

    known = env_ids()
    if not requested or list(requested) == ["all"]:
        return known
    unknown = [e for e in requested if e not in known]
    if unknown:
        raise CLIError(f"unknown --env {', '.join(unknown)}; registered: {', '.join(known)}")
    return list(dict.fromkeys(requested))


def _parse_kwargs(pairs: Sequence[str] | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise CLIError(f"--env-kwarg expects KEY=VALUE with KEY an identifier, got {pair!r}")
        try:
            kwargs[key] = json.loads(value)
        except json.JSONDecodeError:
            kwargs[key] = value
    return kwargs


def _accepted_kwargs(cls: type) -> set[str] | None:
    """Keyword arguments ``cls(...)`` accepts, following ``**kwargs`` up the MRO.

    ``None`` when that cannot be told from the signatures (constructing the env is
    then the only check).
    """
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            parameters = list(inspect.signature(init).parameters.values())[1:]
        except (TypeError, ValueError):
            return None
        names.update(
            p.name
            for p in parameters
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and not p.name.startswith("_")
        )
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            return names
    return None


def _check_env(env_id: str, env_kwargs: dict[str, Any], policies: Sequence[str] = ()) -> None:
    """Fail now, not after a progress bar: ``env_kwargs`` build ``env_id`` and every one
    of ``policies`` exists for it."""
    import gymnasium as gym

    from forgegym.family import family_for_env
    from forgegym.play.policies import policy_names

    family = family_for_env(env_id)
    accepted = _accepted_kwargs(family.env_cls)
    if accepted is not None:
        for key in env_kwargs:
            if key not in accepted:
                raise CLIError(
                    f"--env-kwarg {key}: {env_id} takes no argument {key!r}; "
                    f"it takes {', '.join(sorted(accepted))}"
                )
    valid = policy_names(family.name)
    for policy in policies:
        if policy not in valid:
            raise CLIError(
                f"--policy {policy!r} is not a policy of {env_id}; choose from {', '.join(valid)}"
            )
    if not env_kwargs:
        return
    try:
        env = gym.make(env_id, **env_kwargs)
    except (TypeError, ValueError) as exc:
        given = " ".join(f"{k}={json.dumps(v)}" for k, v in env_kwargs.items())
        raise CLIError(f"--env-kwarg {given}: {env_id} rejects it: {_one_line(str(exc))}") from None
    env.close()


def _check_llm() -> None:
    """``--policy llm``: the endpoint is configured and accepts connections."""
    import socket
    import urllib.request
    from urllib.parse import urlsplit

    from forgegym.play.policies.llm import LLMPolicy

    try:
        policy = LLMPolicy.from_env()
    except ValueError as exc:
        raise CLIError(f"--policy llm: {_one_line(str(exc))}") from None
    url = urlsplit(policy.base_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise CLIError(
            f"--policy llm: API_BASE_URL must be an http(s) URL, got {policy.base_url!r}"
        )
    host, port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
    via = ""
    # urllib (what the policy uses) goes through HTTP(S)_PROXY: then the proxy must answer.
    proxy = urllib.request.getproxies().get(url.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        parsed = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if parsed.hostname:
            host, port, via = parsed.hostname, parsed.port or 80, f" via the proxy {proxy}"
    try:
        with socket.create_connection((host, port), timeout=10):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise CLIError(f"--policy llm: cannot reach {policy.base_url}{via} ({reason})") from None


def _check_output(value: str, flag: str, suffixes: Sequence[str] | None = None) -> Path:
    """An output path that can be written: not a directory, its folder creatable and
    writable, its suffix one of ``suffixes`` (when given)."""
    path = Path(value)
    if path.is_dir():
        raise CLIError(f"{flag} {value}: is a directory; give a file path")
    if suffixes is not None and path.suffix.lower().lstrip(".") not in suffixes:
        raise CLIError(
            f"{flag} {value}: the suffix names the format; use one of "
            + ", ".join(f".{s}" for s in suffixes)
        )
    folder = path.absolute().parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise CLIError(f"{flag} {value}: {folder} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CLIError(f"{flag} {value}: not writable")
    return path


def _check_listen(host: str, port: int) -> None:
    """``serve``: the address can be listened on (not taken, a local interface)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
            sock.bind(address)
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise CLIError(f"--host/--port: cannot listen on {host}:{port} ({reason})") from None


def _require(module: str, extra: str, what: str) -> None:
    """A missing optional dependency names the extra that installs it."""
    if importlib.util.find_spec(module) is None:
        raise CLIError(
            f"{what} needs {module}, which is not installed: pip install 'forgegym[{extra}]' "
            f"(in a checkout: pip install -e '.[{extra}]')"
        )


def _record(report: Results, progress: Any, bar: Any, episode: Episode) -> None:
    report.episodes.append(episode)
    progress.advance(bar)


def _advance(progress: Any, bar: Any, _done: object) -> None:
    progress.advance(bar)


# ------------------------------------------------------------------ commands
def cmd_list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from forgegym.family import iter_env_specs
    from forgegym.play.policies import policy_names

    envs = Table(title="forgegym environments")
    for column in ("id", "family", "difficulty levels", "tasks"):
        envs.add_column(column)
    by_family = Table(title="policies (--policy) per family")
    for column in ("family", "policies", "hacks (--policy hack:NAME)"):
        by_family.add_column(column)
    rows = []
    banks: dict[str, Any] = {}
    for family, spec in iter_env_specs():
        policies = policy_names(family.name)
        hacks = [p.split(":", 1)[1] for p in policies if p.startswith("hack:")]
        if family.name not in banks:
            banks[family.name] = family.make_task_bank()
            by_family.add_row(
                family.name,
                ", ".join(p for p in policies if not p.startswith("hack:")),
                ", ".join(hacks) or "-",
            )
        bank = banks[family.name]
        size = len(bank) if hasattr(bank, "__len__") else None
        levels = [int(level) for level in bank.difficulty_levels]
        rows.append(
            {
                "id": spec.env_id,
                "family": family.name,
                "levels": levels,
                "tasks": size,
                "policies": policies,
                "hacks": hacks,
            }
        )
        envs.add_row(
            spec.env_id,
            family.name,
            ", ".join(map(str, levels)),
            "unbounded" if size is None else str(size),
        )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        console = _console()
        console.print(envs)
        console.print(by_family)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    import platform

    from rich.table import Table

    from forgegym.sandbox.doctor import doctor_report

    report = doctor_report()
    rows: list[dict[str, Any]] = [
        {"feature": r.name, "active": r.active, "detail": r.detail} for r in report
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    console = _console()
    console.print(f"forgegym doctor — Python {platform.python_version()} on {platform.platform()}")
    table = Table(title="sandbox isolation")
    table.add_column("feature")
    table.add_column("active")
    table.add_column("detail")
    for row in rows:
        table.add_row(row["feature"], "yes" if row["active"] else "no", row["detail"])
    console.print(table)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from rich.progress import Progress
    from rich.table import Table

    from forgegym.play.evaluation import evaluate, summarise
    from forgegym.play.policies.llm import LLMPolicyError
    from forgegym.play.results import Results

    # Everything a user can get wrong is checked here, before the first progress bar.
    env_ids = _env_ids(args.env)
    policies = list(dict.fromkeys(args.policy or ["noop", "reference"]))
    out = _check_output(args.out, "--out")
    env_kwargs = _parse_kwargs(args.env_kwarg)
    if args.max_steps is not None:
        env_kwargs["max_steps"] = args.max_steps
    for env_id in env_ids:
        _check_env(env_id, env_kwargs, policies)
    if "llm" in policies:
        _check_llm()

    report = Results(metadata={"command": "forgegym eval", "seed": args.seed})
    console = _console()
    try:
        with Progress(console=console, transient=False, disable=args.quiet) as progress:
            for env_id in env_ids:
                for policy in policies:
                    bar = progress.add_task(f"{env_id} × {policy}", total=args.episodes)
                    results = evaluate(
                        env_id,
                        policy,
                        episodes=args.episodes,
                        seed=args.seed,
                        env_kwargs=env_kwargs,
                        log_steps=args.log_steps or None,
                        on_episode=partial(_record, report, progress, bar),
                    )
                    if "report" in results.metadata:  # the family's own statistics
                        reports = report.metadata.setdefault("reports", {})
                        reports[f"{env_id} {policy}"] = results.metadata["report"]
    except (LLMPolicyError, KeyboardInterrupt) as exc:
        # Keep what finished: an LLM run that fails after an hour has paid for it.
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else _one_line(str(exc))
        if report.episodes:
            report.metadata["incomplete"] = reason
            report.save(out)
            reason += f"; the {len(report.episodes)} finished episodes are in {out}"
        raise CLIError(reason) from None
    table = Table(title="forgegym eval")
    for column in ("env", "policy", "episodes", "success rate", "mean score", "mean reward"):
        table.add_column(column)
    for run in summarise(report):
        table.add_row(
            run.env_id,
            run.policy,
            str(run.episodes),
            f"{run.success_rate:.2%}",
            f"{run.mean_score:.3f}",
            f"{run.mean_reward:.3f}",
        )
    console.print(table)
    report.save(out)
    console.print(f"results written to {out}")
    return 0


def cmd_tasks_verify(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from forgegym.play.verify import verify_tasks

    env_ids = _env_ids(args.env)  # before the progress bar
    summaries = []
    with Progress(console=_console(), disable=args.json) as progress:
        for env_id in env_ids:
            bar = progress.add_task(f"verify {env_id}", total=args.limit)
            summary = verify_tasks(
                env_id,
                limit=args.limit,
                seed=args.seed,
                offset=args.offset,
                partial=not args.skip_partial,
                on_task=partial(_advance, progress, bar),
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
        _console().print(table)
        for s in summaries:
            for check in s.invalid[:20]:
                _console().print(f"[red]invalid[/red] {check.task_id}: {'; '.join(check.problems)}")
    return 0 if ok else 1


def cmd_bench(args: argparse.Namespace) -> int:
    if args.env:
        _env_ids([args.env])  # a clear error for an unknown id, before any work
        if not (args.ray or args.vector or args.throughput):
            from forgegym.family import families, family_for_env

            if not family_for_env(args.env).has_bench:
                with_bench = [i for f in families() if f.has_bench for i in f.env_ids]
                raise CLIError(
                    f"--env {args.env}: its family registers no grading benchmark; "
                    f"these do: {', '.join(with_bench)}"
                )
    if args.throughput:
        from forgegym.bench.throughput import bench_throughput

        bench_throughput(
            [args.env] if args.env else None,
            tasks=args.tasks or 16,
            group=args.group,
            mix=args.mix,
            reference=not args.no_reference,
            repeats=args.repeats,
        )
        return 0
    if args.ray:
        _require("ray", "ray", "bench --ray")
        from forgegym.bench.ray import print_ray_bench, run_ray_bench

        bench = run_ray_bench(args.env, tasks=args.tasks or 8)
        print_ray_bench(bench)
        return 0 if bench.identical else 1
    if args.vector:
        from forgegym.bench.vector import run_vector_bench

        for env_id in _env_ids([args.env] if args.env else None):
            # Default: every env's grading fans out over all cores through the shared pool.
            run_vector_bench(env_id)
            # One sandbox worker per env process: what vectorisation adds when each env's
            # step is serial (how a user runs N envs on N cores without oversubscription).
            run_vector_bench(env_id, env_kwargs={"runner_workers": 1})
        return 0
    if args.env:
        from forgegym.family import family_for_env

        family_for_env(args.env).run_bench()
        return 0
    from forgegym.bench.runner import print_runner_bench, run_runner_bench

    print_runner_bench(run_runner_bench(runs=args.runs))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    for module in ("fastapi", "uvicorn"):
        _require(module, "serve", "serve")
    known = _env_ids(None)
    if args.env_id not in known:
        raise CLIError(f"unknown ENV_ID {args.env_id!r}; registered: {', '.join(known)}")
    env_kwargs = _parse_kwargs(args.env_kwarg)
    _check_env(args.env_id, env_kwargs)
    _check_listen(args.host, args.port)
    from forgegym.server import serve

    serve(
        args.env_id,
        host=args.host,
        port=args.port,
        env_kwargs=env_kwargs,
        max_sessions=args.max_sessions,
        idle_timeout_s=args.idle_timeout if args.idle_timeout > 0 else None,
        curriculum=args.curriculum,
    )
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    _require("matplotlib", "plot", "plot")
    from forgegym.play import plots

    source = Path(args.input)
    if not source.exists():
        raise CLIError(f"{args.input}: no such file")
    if not source.is_file():
        raise CLIError(f"{args.input}: not a file")
    if args.episode is not None and args.kind != "episode":
        raise CLIError("--episode applies to `plot episode` only")
    out = _check_output(args.output, "-o", suffixes=sorted(plots.output_formats()))
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CLIError(f"{args.input}: not a JSON file ({_one_line(str(exc))})") from None
    try:
        if args.kind == "episode":
            plots.plot_episode(data, out, episode=args.episode)
        elif args.kind == "learning":
            from forgegym.integrations.learning import plot_learning

            plot_learning(data, out)
        else:
            plots.plot_curriculum(data, out)
    except ValueError as exc:  # the input's schema: name the file
        raise CLIError(f"{args.input}: {_one_line(str(exc))}") from None
    print(f"wrote {out}")
    return 0


# -------------------------------------------------------------------- parser
_DESCRIPTION = """\
Gymnasium environments for training and evaluating code LLMs, graded by executing code
in a sandbox. Every command works for every registered family (`forgegym list`).

examples:
  forgegym list                                   # ids, task counts, policies and hacks
  forgegym doctor                                 # which sandbox isolation is active here
  forgegym eval --env Forge/Bugfix-v0 --policy reference --episodes 3
  forgegym tasks verify --env Forge/Bugfix-v0 --limit 10
  forgegym bench                                  # warm pool vs plain pytest, as a ratio
  forgegym serve Forge/Bugfix-v0 --port 8000      # OpenEnv server + dashboard at /
  forgegym plot episode forgegym-results.json -o dash.png
"""

_POLICY_HELP = (
    "noop | random | reference | partial | llm | hack:NAME | baseline:NAME; repeatable "
    "(default: noop and reference). `forgegym list` shows each family's. llm reads "
    "API_BASE_URL, MODEL_NAME and API_KEY"
)


def build_parser() -> argparse.ArgumentParser:
    from forgegym import __version__

    parser = _Parser(prog="forgegym", description=_DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"forgegym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "list",
        help="registered environments, task counts, policies and hacks",
        description="Every registered id with its family, difficulty levels and task "
        "count, and each family's policies and known hacks.",
    )
    p.add_argument("--json", action="store_true", help="print JSON rows (one per id)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser(
        "doctor",
        help="which sandbox isolation features are active here",
        description="Which of the sandbox's isolation features (namespaces, seccomp, "
        "Landlock, rlimits, ...) are active on this machine, and why others are not.",
    )
    p.add_argument("--json", action="store_true", help="print JSON rows (one per feature)")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser(
        "eval",
        help="run baseline or LLM policies on environments",
        description="Play env x policy x episodes (seeds SEED, SEED+1, ...), print a "
        "summary table and write a JSON results file (`forgegym plot episode` reads it).",
    )
    p.add_argument(
        "--env",
        action="append",
        metavar="ID",
        help="environment id, repeatable (default: every registered id)",
    )
    p.add_argument("--policy", action="append", metavar="POLICY", help=_POLICY_HELP)
    p.add_argument(
        "--episodes", type=_int_at_least(1), default=5, help="episodes per env and policy"
    )
    p.add_argument("--seed", type=_int_at_least(0), default=0, help="seed of the first episode")
    p.add_argument(
        "--max-steps",
        type=_int_at_least(1),
        default=None,
        metavar="N",
        help="steps per episode (default: the env's own)",
    )
    p.add_argument(
        "--env-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="gym.make keyword argument, VALUE parsed as JSON when it is; repeatable",
    )
    p.add_argument("--out", default="forgegym-results.json", metavar="PATH", help="results file")
    p.add_argument("--log-steps", action="store_true", help="print [START]/[STEP]/[END] lines")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval)

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
        "--limit", type=_int_at_least(1), default=50, help="tasks to grade per environment"
    )
    v.add_argument("--seed", type=_int_at_least(0), default=0, help="seed of the task draw")
    v.add_argument(
        "--offset",
        type=_int_at_least(0),
        default=0,
        help="skip the first N tasks of the seed's order (chunks)",
    )
    v.add_argument(
        "--skip-partial",
        action="store_true",
        help="do not grade the family's partial fix (reported only, never a validity check)",
    )
    v.add_argument("--json", action="store_true", help="print a JSON summary")
    v.set_defaults(func=cmd_tasks_verify)

    p = sub.add_parser(
        "bench",
        help="benchmarks, reported as ratios against the baseline",
        description="Without options: the sandbox runner's latency, warm fork-server pool "
        "vs a plain `python -m pytest` per run. Speeds are reported as ratios.",
    )
    p.add_argument("--env", metavar="ID", help="benchmark this id's family grading")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--vector", action="store_true", help="async vs sync vector rollouts")
    mode.add_argument(
        "--ray", action="store_true", help="grading: local pool vs Ray, one and two nodes"
    )
    p.add_argument(
        "--runs", type=_int_at_least(1), default=30, help="runs per runner (runner bench)"
    )
    mode.add_argument(
        "--throughput",
        action="store_true",
        help="GRPO grading completions/s, one worker vs the pool, and where the time goes",
    )
    p.add_argument(
        "--tasks",
        type=_int_at_least(1),
        default=None,
        help="tasks per config (--ray: 8, --throughput: 16)",
    )
    p.add_argument(
        "--group", type=_int_at_least(1), default=8, help="completions per task (--throughput)"
    )
    p.add_argument(
        "--mix",
        choices=("issue", "distinct"),
        default="issue",
        help="--throughput completions: issue = half reference, half no-op per group; "
        "distinct = no two alike (each graded in full)",
    )
    p.add_argument(
        "--no-reference", action="store_true", help="skip the unoptimised path (--throughput)"
    )
    p.add_argument(
        "--repeats",
        type=_int_at_least(1),
        default=1,
        help="measurements per configuration, pool sizes alternating (--throughput)",
    )
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser(
        "serve",
        help="serve an env over OpenEnv's HTTP/WebSocket protocol + dashboard",
        description="Serve one id over OpenEnv's HTTP/WebSocket protocol, with a "
        "dashboard at / (needs the serve extra).",
    )
    p.add_argument("env_id", metavar="ENV_ID", help="a registered id, e.g. Forge/Bugfix-v0")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    p.add_argument("--port", type=_port, default=8000, help="TCP port")
    p.add_argument(
        "--max-sessions",
        type=_int_at_least(1),
        default=64,
        help="session cap (HTTP + WebSocket)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="close sessions idle for S seconds; 0 never",
    )
    p.add_argument(
        "--curriculum", action="store_true", help="a shared pass@k scheduler picks the tasks"
    )
    p.add_argument(
        "--env-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="gym.make keyword argument, VALUE parsed as JSON when it is; repeatable",
    )
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "plot",
        help="plots of eval results, curriculum state and learning reports",
        description="episode: the dashboard of a `forgegym eval` results file. curriculum: "
        "pass@k per task and tier sizes over time from a curriculum state file. learning: "
        "a benchmarks/learning.py report. The output's suffix picks the format (.png, "
        ".pdf, .svg, ...). Needs matplotlib (the plot extra).",
    )
    p.add_argument("kind", choices=["episode", "curriculum", "learning"], help="what to plot")
    p.add_argument(
        "input",
        metavar="INPUT",
        help="RESULTS.json (episode), STATE.json (curriculum) or a learning report (learning)",
    )
    p.add_argument(
        "-o", "--output", required=True, metavar="PATH", help="file to write; suffix = format"
    )
    p.add_argument(
        "--episode",
        type=_int_at_least(0),
        default=None,
        metavar="INDEX",
        help="plot only this episode of the results (default: all)",
    )
    p.set_defaults(func=cmd_plot)
    return parser


def _is_user_error(exc: BaseException) -> bool:
    from forgegym.play.policies.llm import LLMPolicyError

    return isinstance(exc, (ValueError, OSError, LLMPolicyError))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; a user error is one line on stderr and exit status 2 (1 for
    errors met while working), never a traceback. Set ``FORGEGYM_TRACEBACK=1`` to see
    the traceback anyway."""
    debug = os.environ.get("FORGEGYM_TRACEBACK") == "1"
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args))
    except CLIError as exc:
        if debug:
            raise
        print(f"forgegym: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("forgegym: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if debug or not _is_user_error(exc):
            raise
        print(f"forgegym: {_one_line(str(exc)) or type(exc).__name__}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
