"""A repository's test dependencies, installed once into a cached environment.

The environment is a plain directory of installed packages (``pip install --target``,
or ``uv pip install --target`` when ``uv`` is on the PATH), keyed by a hash of the
dependency specification (the requirement strings, the contents of local-path
requirements, the interpreter's version). It is built by the trusted parent at ``make``
and never written again: its files are made read-only and the sandbox binds it
read-only and appends it to the child's ``sys.path`` (after the runtime, so the
harness's own pytest is the one that runs). A dependency that cannot be installed is a
``ValueError`` at ``make`` that names it and shows the installer's message.

Where: ``cache_dir`` (an environment kwarg), else ``$FORGEGYM_CACHE_DIR``, else
``~/.cache/forgegym``; environments live in its ``envs/`` folder.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import tomllib

__all__ = [
    "CACHE_ENV_VAR",
    "cache_root",
    "declared_test_dependencies",
    "ensure_environment",
    "environment_key",
]

CACHE_ENV_VAR = "FORGEGYM_CACHE_DIR"
INSTALL_TIMEOUT_S = 900.0
#: Requirements left out of the environment: the runtime brings pytest, and plugins are
#: not loaded (plugin autoload is off in the sandbox and in the host check alike).
_SKIPPED = re.compile(r"^(pytest([-_].*)?|coverage|pytest-cov|tox|nox|pre-commit)$", re.I)
_TEST_EXTRAS = ("test", "tests", "testing")
_REQUIREMENT_FILES = (
    "requirements-test.txt",
    "requirements_test.txt",
    "test-requirements.txt",
    "test_requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "tests/requirements.txt",
)


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """The forgegym cache: ``cache_dir``, else ``$FORGEGYM_CACHE_DIR``, else
    ``~/.cache/forgegym``."""
    if cache_dir is not None:
        if not isinstance(cache_dir, str | Path) or not str(cache_dir):
            raise ValueError(f"cache_dir: expected a directory path, got {cache_dir!r}")
        return Path(cache_dir).expanduser().absolute()
    env = os.environ.get(CACHE_ENV_VAR)
    if env:
        return Path(env).expanduser().absolute()
    return Path.home() / ".cache" / "forgegym"


def _name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return match.group(1) if match else requirement


def _keep(requirement: str) -> bool:
    requirement = requirement.split(";")[0].strip()
    return (
        bool(requirement)
        and not requirement.startswith("-")
        and not _SKIPPED.match(_name(requirement))
    )


def declared_test_dependencies(files: Mapping[str, str]) -> list[str]:
    """What the repository declares it needs to run its tests: ``[project]``
    dependencies, the ``test``/``tests``/``testing`` extras and dependency groups of its
    ``pyproject.toml``, and the usual test requirement files. pytest, its plugins and
    coverage are left out (see the module doc)."""
    found: list[str] = []
    text = files.get("pyproject.toml")
    if text:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            data = {}
        project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
        found += [str(r) for r in project.get("dependencies", []) or []]
        extras = project.get("optional-dependencies", {}) or {}
        groups = data.get("dependency-groups", {}) or {}
        for key in _TEST_EXTRAS:
            found += [str(r) for r in extras.get(key, []) or []]
            found += [r for r in groups.get(key, []) or [] if isinstance(r, str)]
    for name in _REQUIREMENT_FILES:
        for line in files.get(name, "").splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                found.append(line)
    return sorted({r.strip() for r in found if _keep(r)})


def _is_local(spec: str, base: Path | None) -> Path | None:
    """The directory a requirement names, when it is a local path."""
    if spec.startswith(("./", "../", "/", "~", "file:")):
        raw = spec[5:] if spec.startswith("file:") else spec
        path = Path(raw).expanduser()
        if not path.is_absolute() and base is not None:
            path = base / path
        return path.resolve()
    return None


def _tree_digest(path: Path) -> str:
    digest = hashlib.sha256()
    for item in sorted(path.rglob("*")):
        rel = item.relative_to(path).as_posix()
        if item.is_file() and "__pycache__" not in rel and ".egg-info" not in rel:
            digest.update(rel.encode() + b"\0" + item.read_bytes() + b"\0")
    return digest.hexdigest()


def environment_key(specs: Sequence[str], base: Path | None = None) -> str:
    """The cache key of an environment: the requirements (local paths by content) and
    the interpreter's version."""
    digest = hashlib.sha256(f"python{sys.version_info[:3]}".encode())
    for spec in sorted(specs):
        local = _is_local(spec, base)
        if local is not None:
            if not local.is_dir():
                raise ValueError(f"test_dependencies: {spec!r} is not a directory")
            digest.update(b"local\0" + _tree_digest(local).encode())
        else:
            digest.update(b"req\0" + spec.encode())
    return digest.hexdigest()[:20]


def _installer(target: Path, specs: Sequence[str], isolated: bool) -> list[str]:
    uv = shutil.which("uv")
    if uv is not None:
        return (
            [uv, "pip", "install", "--python", sys.executable, "--target", str(target)]
            + ([] if isolated else ["--no-build-isolation"])
            + list(specs)
        )
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-input",
        "--disable-pip-version-check",
        "--no-warn-script-location",
        "--target",
        str(target),
        *([] if isolated else ["--no-build-isolation"]),
        *specs,
    ]


def _make_read_only(path: Path) -> None:
    for root, dirs, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            if not os.path.islink(full):
                os.chmod(full, 0o444)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o555)
    os.chmod(path, 0o555)


def ensure_environment(
    specs: Sequence[str],
    *,
    cache_dir: str | Path | None = None,
    base: Path | None = None,
    timeout_s: float = INSTALL_TIMEOUT_S,
    exclude: Sequence[str] = (),
) -> Path | None:
    """The site directory holding ``specs`` installed (built on first use, then reused);
    ``None`` when there is nothing to install. Local paths (``./vendor/pkg``, relative
    to ``base``) are installed without build isolation, so they need no package index.

    ``exclude``: top-level import names that must not be importable from the
    environment: the project's own packages, which a dependency may pull in at some
    release (freezegun requires python-dateutil, so a dateutil task's environment held
    the pristine dateutil: issue 36). They are removed after the install, and the
    environment is keyed by them too.

    Raises:
        ValueError: a requirement could not be installed (the installer's message).
    """
    specs = sorted(dict.fromkeys(str(s).strip() for s in specs if str(s).strip()))
    if not specs:
        return None
    excluded = sorted({str(n).strip() for n in exclude if str(n).strip().isidentifier()})
    key = environment_key([*specs, *(f"exclude:{n}" for n in excluded)], base)
    envs = cache_root(cache_dir) / "envs"
    envs.mkdir(parents=True, exist_ok=True)
    final = envs / key
    site = final / "site"
    with open(envs / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "forgegym-env.json").is_file():
            return site
        tmp = envs / f"{key}.tmp-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        # Local paths are built from copies: a build writes into its source tree
        # (egg-info, build/), and the user's repository is never written.
        local: list[str] = []
        for i, spec in enumerate(specs):
            path = _is_local(spec, base)
            if path is not None:
                copy = tmp / "src" / f"{i}-{path.name}"
                shutil.copytree(path, copy, ignore=shutil.ignore_patterns("*.egg-info", "build"))
                local.append(str(copy))
        remote = [s for s in specs if _is_local(s, base) is None]
        try:
            for group, isolated in ((remote, True), (local, False)):
                if not group:
                    continue
                command = _installer(tmp / "site", group, isolated)
                try:
                    proc = subprocess.run(
                        command,
                        capture_output=True,
                        text=True,
                        timeout=timeout_s,
                        env={**os.environ, "PIP_NO_INPUT": "1"},
                        check=False,
                    )
                except subprocess.TimeoutExpired:
                    raise ValueError(
                        f"test_dependencies: installing {group} took over {timeout_s:.0f} s"
                    ) from None
                if proc.returncode != 0:
                    tail = (proc.stderr or proc.stdout).strip()[-1500:]
                    raise ValueError(
                        f"test_dependencies: could not install {group} into the cached "
                        f"environment ({' '.join(command[:3])} exited {proc.returncode}):\n"
                        f"{tail}"
                    )
            (tmp / "site").mkdir(exist_ok=True)
            shutil.rmtree(tmp / "src", ignore_errors=True)
            for name in excluded:
                shutil.rmtree(tmp / "site" / name, ignore_errors=True)
                for module in (
                    f"{name}.py",
                    *(p.name for p in (tmp / "site").glob(f"{name}.*.so")),
                ):
                    (tmp / "site" / module).unlink(missing_ok=True)
            # Console scripts and caches are not needed by tests run in-process.
            shutil.rmtree(tmp / "site" / "bin", ignore_errors=True)
            (tmp / "forgegym-env.json").write_text(
                json.dumps({"key": key, "requirements": specs, "python": sys.version}, indent=1)
            )
            _make_read_only(tmp / "site")
            if final.exists():
                shutil.rmtree(final, ignore_errors=True)
            os.replace(tmp, final)
        finally:
            if tmp.exists():
                for root, dirs, _names in os.walk(tmp):
                    for name in dirs:
                        os.chmod(os.path.join(root, name), 0o755)
                shutil.rmtree(tmp, ignore_errors=True)
    return site
