"""Shared by the command modules: the parser classes, argument types, the checks that
turn a user's mistake into one line (:class:`CLIError`) before any work starts, and
progress helpers."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias

if TYPE_CHECKING:
    from forgegym.play.results import Episode, Results
__all__ = [
    "CLIError",
    "HelpFormatter",
    "POLICY_HELP",
    "Parser",
    "advance_progress",
    "check_env",
    "check_listen",
    "check_llm",
    "check_output",
    "checked_env_ids",
    "int_at_least",
    "is_user_error",
    "make_console",
    "one_line",
    "parse_kwargs",
    "port_number",
    "record_episode",
    "require_extra",
]


class CLIError(Exception):
    """A user error: :func:`main` prints it as one line on stderr and exits with 2."""


class HelpFormatter(argparse.HelpFormatter):
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


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line (``main`` prints them), not usage + error."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise CLIError(f"{message} (see `{self.prog} --help`)")


#: The subcommands of ``forgegym``: each command module's ``add_parser`` adds its own.
Commands: TypeAlias = "argparse._SubParsersAction[Parser]"


def int_at_least(low: int) -> Any:
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


def port_number(text: str) -> int:
    value = int_at_least(0)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be a TCP port in [0, 65535], got {value}")
    return value  # type: ignore[no-any-return]


def make_console() -> Any:
    from rich.console import Console

    # Piped output (CI logs, files) gets rich's 80 columns by default, which cuts env ids.
    return Console() if sys.stdout.isatty() else Console(width=140)


def make_progress(console: Any, *, disable: bool = False) -> Any:
    """A rich progress bar that shows the time elapsed, and the time remaining only while
    it is known: rich's default columns end in a remaining-time column that reads
    ``0:00:00`` once a bar is done (and ``-:--:--`` before the first episode), which
    says nothing about how long the run took."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class RemainingColumn(ProgressColumn):
        """``~0:01:23 left`` while the bar runs and its speed is estimated; else blank."""

        def render(self, task: Task) -> Text:
            remaining = task.time_remaining
            if task.finished or remaining is None:
                return Text("")
            minutes, seconds = divmod(int(remaining), 60)
            hours, minutes = divmod(minutes, 60)
            return Text(f"~{hours}:{minutes:02d}:{seconds:02d} left", style="progress.remaining")

    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        RemainingColumn(),
        console=console,
        transient=False,
        disable=disable,
    )


def one_line(message: str) -> str:
    """A message as one line, without the ``argument:`` prefix library errors carry.

    forgegym's ``ValueError`` messages start with the Python argument they name
    (``"name: unknown policy 'x'"``); at the command line that name is noise.
    """
    text = " ".join(str(message).split())
    return re.sub(r"^[a-z_][a-z0-9_]*: (?=\S)", "", text)


def checked_env_ids(requested: Sequence[str] | None) -> list[str]:
    from forgegym.family.registration import env_ids

    known = env_ids()
    if not requested or list(requested) == ["all"]:
        return known
    unknown = [e for e in requested if e not in known]
    if unknown:
        raise CLIError(f"unknown --env {', '.join(unknown)}; registered: {', '.join(known)}")
    return list(dict.fromkeys(requested))


def parse_kwargs(pairs: Sequence[str] | None) -> dict[str, Any]:
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


def check_env(env_id: str, env_kwargs: dict[str, Any], policies: Sequence[str] = ()) -> None:
    """Fail now, not after a progress bar: ``env_kwargs`` build ``env_id`` and every one
    of ``policies`` exists for it."""
    import gymnasium as gym

    from forgegym.core.env import accepted_kwargs
    from forgegym.family import family_for_env
    from forgegym.policies import policy_names

    family = family_for_env(env_id)
    accepted = accepted_kwargs(family.env_cls)
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
        raise CLIError(f"--env-kwarg {given}: {env_id} rejects it: {one_line(str(exc))}") from None
    env.close()


def check_llm() -> None:
    """``--policy llm``: the endpoint is configured and accepts connections."""
    from forgegym.policies.llm import LLMPolicy

    try:
        policy = LLMPolicy.from_env()
    except ValueError as exc:
        raise CLIError(f"--policy llm: {one_line(str(exc))}") from None
    check_endpoint(policy.base_url, "--policy llm: API_BASE_URL")


def check_endpoint(base_url: str, what: str) -> None:
    """An OpenAI-compatible endpoint's URL is http(s) and its host accepts connections."""
    import socket
    import urllib.request
    from urllib.parse import urlsplit

    url = urlsplit(base_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise CLIError(f"{what} must be an http(s) URL, got {base_url!r}")
    host, port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
    via = ""
    # The HTTP clients (httpx under openai) go through HTTP(S)_PROXY: the proxy must answer.
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
        raise CLIError(f"{what.split(':')[0]}: cannot reach {base_url}{via} ({reason})") from None


def weights_arg(text: str) -> tuple[float, ...]:
    """``--weights 20,35,45``: non-negative numbers, not all zero."""
    import math

    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected numbers separated by commas, got {text!r}"
        ) from None
    if any(not math.isfinite(v) or v < 0 for v in values) or sum(values) <= 0:
        raise argparse.ArgumentTypeError(f"expected non-negative numbers, not all 0, got {text!r}")
    return values


def temperature_arg(text: str) -> float:
    """``--temperature``: a number in [0, 2] (the OpenAI API's range)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value <= 2.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 2], got {value}")
    return value


def default_cache() -> Path:
    """The completion cache of ``eval --model`` (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "forgegym" / "completions.sqlite"


def check_output(value: str, flag: str, suffixes: Sequence[str] | None = None) -> Path:
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


def check_listen(host: str, port: int) -> None:
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


def require_extra(module: str, extra: str, what: str) -> None:
    """A missing optional dependency names the extra that installs it."""
    if importlib.util.find_spec(module) is None:
        raise CLIError(
            f"{what} needs {module}, which is not installed: pip install 'forgegym[{extra}]' "
            f"(in a checkout: pip install -e '.[{extra}]')"
        )


def record_episode(
    report: Results, progress: Any, bar: Any, episode: Episode, *, run: int = 0
) -> None:
    episode.run = run
    report.episodes.append(episode)
    progress.advance(bar)


def advance_progress(progress: Any, bar: Any, _done: object) -> None:
    progress.advance(bar)


POLICY_HELP = (
    "noop | random | reference | navigate | partial | llm | hack:NAME | baseline:NAME; repeatable "
    "(default: noop and reference). `forgegym list` shows each family's. llm reads "
    "API_BASE_URL, MODEL_NAME and API_KEY"
)


def is_user_error(exc: BaseException) -> bool:
    from forgegym.policies.llm import LLMPolicyError

    return isinstance(exc, (ValueError, OSError, LLMPolicyError))
