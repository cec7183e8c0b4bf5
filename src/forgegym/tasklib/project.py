"""A user's repository as it is: its files, its test files, its pytest configuration,
its import roots and conftest files, its dependency environment, what counts as its
package (editable) and what is around it (read-only).

The one reader of a project shared by both families' repository modes (Bugfix's
:func:`~forgegym.envs.bugfix.repo.repo_task`, FlakyRepair's ``RepoTaskBank``) and the
task factory (:mod:`forgegym.tasklib.factory`); the sandbox baseline run is
:mod:`forgegym.tasklib.baseline`, the host agreement :mod:`forgegym.tasklib.agreement`.
Everything here reads the repository as it was *before* the episode, in the trusted
parent: the configuration that runs is the pristine one, whatever an agent later
writes into its copy.
"""

from __future__ import annotations

import configparser
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

import tomllib

from forgegym.sandbox.jobs import ProjectRun
from forgegym.sandbox.workspace import validate_relative_path

__all__ = [
    "CONFIG_FILES",
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "ProjectFiles",
    "ProjectLayout",
    "is_package_source",
    "is_test_file",
    "is_test_support",
    "project_layout",
    "package_names",
    "pytest_section",
    "read_project",
    "reduce_addopts",
    "run_options",
    "dependency_environment",
    "graded_test_files",
    "imports_of_tests",
]

#: Repository-mode caps on a project's Python files (both families' ``gym.make``
#: defaults): real modules run to hundreds of KB (more-itertools' ``more.py``: 160 KB),
#: and observations are bounded by the navigation budget, not by these.
MAX_FILE_BYTES = 1_000_000
MAX_FILES = 2_000
#: Where pytest reads its configuration, in pytest's own priority order.
CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "env", "__pycache__", ".tox", ".nox"}
    | {"node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist"}
    | {"site-packages", ".eggs", "htmlcov"}
)
#: Top-level folders that are not the package: documentation, examples, build and
#: release scripts, benchmarks. Read-only unless ``editable_files`` lists them.
NON_PACKAGE_DIRS = frozenset(
    {"docs", "doc", "examples", "example", "scripts", "script", "tools", "bin", "benchmarks"}
    | {"bench", "asv_bench", "ci", "build_tools", "tasks", "misc", "contrib", "extras"}
    | {"vendor", "third_party", "devtools", "dev", "utils_dev", "requirements"}
)
#: Top-level modules that build, release or configure, never the package.
NON_PACKAGE_MODULES = frozenset(
    {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py", "dodo.py"}
    | {"manage.py", "versioneer.py", "release.py", "make.py", "build.py", "_build.py"}
)
_TEST_DIRS = frozenset({"tests", "test", "testing"})
#: Data files a test may read, copied as text when small and UTF-8; the others (compiled
#: catalogues, binary fixtures, text over the budget) go by content into the read-only
#: data channel (``Task.data_files``) within its own budget below.
_DATA_SUFFIXES = frozenset(
    {".json", ".txt", ".csv", ".tsv", ".cfg", ".ini", ".toml", ".yaml", ".yml", ".xml"}
    | {".rst", ".md", ".html", ".svg", ".in", ".dat", ".pyi", ".typed", ".sql", ".j2"}
)
#: The largest file of an unknown suffix read as text data (by content).
MAX_UNKNOWN_BYTES = 256_000
MAX_DATA_FILES = 400
MAX_DATA_BYTES = 4_000_000
#: The read-only data channel (bytes, never shown): its files, their total and the
#: largest one (a generated data module over ``max_file_bytes`` is copied this way).
MAX_BLOB_FILES = 400
MAX_BLOB_BYTES = 16_000_000
MAX_BLOB_FILE_BYTES = 8_000_000

#: Core pytest options a project's ``addopts`` may keep (their value, if any, follows
#: with ``=`` or as the next word). Anything else belongs to a plugin that is not loaded
#: (plugin autoload is off in the sandbox and in the host check alike), or changes
#: what runs (``-x``, ``--maxfail``, ``--lf``, ``-n``): dropped and reported.
_KEEP_FLAGS = frozenset(
    {"--strict-markers", "--strict-config", "--strict", "--doctest-modules"}
    | {"--doctest-continue-on-failure", "--runxfail", "--continue-on-collection-errors"}
    | {"-q", "-v", "-vv", "--quiet", "--verbose", "-l", "--showlocals", "-s"}
    | {"--disable-warnings", "--disable-pytest-warnings", "--no-header", "--no-summary"}
)
_KEEP_VALUED = frozenset(
    {"--import-mode", "--doctest-glob", "--doctest-report", "--ignore", "--ignore-glob"}
    | {"--deselect", "-W", "--pythonwarnings", "--assert", "--tb", "-m", "-k", "--capture"}
    | {"-r", "-p", "--durations", "--log-level", "--log-format", "--log-date-format"}
    | {"--log-cli-level", "--rootdir"}
)


def reduce_addopts(addopts: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(kept, dropped)``: the core pytest options of a project's ``addopts``."""
    kept: list[str] = []
    dropped: list[str] = []
    i = 0
    words = [str(w) for w in addopts]
    while i < len(words):
        word = words[i]
        i += 1
        name, eq, _value = word.partition("=")
        if word in _KEEP_FLAGS:
            kept.append(word)
            continue
        short = word[:2] if word.startswith("-") and not word.startswith("--") else ""
        if name in _KEEP_VALUED or short in _KEEP_VALUED:
            has_value = bool(eq) or (short and len(word) > 2)
            value = None if has_value or i >= len(words) else words[i]
            if value is not None:
                i += 1
            plugin = (value if value is not None else word[2:] if short else _value) or ""
            # Loading a plugin: autoload is off, so it is not there; disabling one is fine.
            if (name == "-p" or short == "-p") and not plugin.startswith("no:"):
                dropped.append(word if value is None else f"{word} {value}")
                continue
            if name == "--rootdir":
                dropped.append(word if value is None else f"{word} {value}")
                continue
            kept.extend([word] if value is None else [word, value])
            continue
        # Unknown: a plugin's option or one that changes what runs. Its value, if given
        # as the next word, goes with it.
        taken = word
        if not eq and word.startswith("--") and i < len(words) and not words[i].startswith("-"):
            taken = f"{word} {words[i]}"
            i += 1
        dropped.append(taken)
    return kept, dropped


def _section(name: str, text: str) -> dict[str, Any] | None:
    """The pytest settings in one config file (None: it has none)."""
    if name == "pyproject.toml":
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"repo_path: pyproject.toml does not parse: {exc}") from None
        pytest_table = tool.get("pytest") if isinstance(tool, dict) else None
        if not isinstance(pytest_table, dict):
            return None
        if isinstance(pytest_table.get("ini_options"), dict):
            return dict(pytest_table["ini_options"])
        native = {k: v for k, v in pytest_table.items() if k != "ini_options"}
        return native or None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ValueError(f"repo_path: {name} does not parse: {exc}") from None
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    if parser.has_section(section):
        return dict(parser.items(section))
    if name in ("pytest.ini", ".pytest.ini"):
        return {}  # pytest.ini is the config file even without a section
    return None


def pytest_section(files: Mapping[str, str]) -> tuple[str | None, dict[str, Any]]:
    """``(config file, settings)``: the pytest configuration pytest itself would pick at
    the root (the first of :data:`CONFIG_FILES` with a pytest section, else a
    ``pyproject.toml`` with none); ``(None, {})`` without one.

    Raises:
        ValueError: the chosen file, or one before it, does not parse.
    """
    for candidate in CONFIG_FILES:
        text = files.get(candidate)
        if text is None:
            continue
        found = _section(candidate, text)
        if found is not None:
            return candidate, found
    if "pyproject.toml" in files:
        return "pyproject.toml", {}
    return None, {}


#: The ini keys a run with ``-o`` overrides of a trusted ini honours (FlakyRepair's reruns,
#: :func:`run_options`), and how pytest types them (args: whitespace-separated).
_INI_KEYS = {
    "python_files": "args",
    "python_classes": "args",
    "python_functions": "args",
    "usefixtures": "args",
    "filterwarnings": "linelist",
    "xfail_strict": "bool",
}


def _as_list(value: Any, kind: str) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value)
    return [v for v in (text.splitlines() if kind == "linelist" else text.split()) if v.strip()]


def run_options(files: Mapping[str, str]) -> dict[str, Any]:
    """How the repository's tests run as ``-o`` overrides of a trusted ini (FlakyRepair's
    jobs; Bugfix's run the project's own configuration, :meth:`ProjectLayout.run`):
    ``conftest`` (it has some), ``paths`` (import roots: its ``pythonpath`` setting,
    else ``src`` for a src layout) and ``ini`` (the honoured settings)."""
    _name, section = pytest_section(files)
    ini: dict[str, str] = {}
    for key, kind in _INI_KEYS.items():
        if key not in section:
            continue
        value = section[key]
        if kind == "bool":
            ini[key] = "true" if str(value).strip().lower() in ("1", "true", "yes") else "false"
        else:
            ini[key] = ("\n" if kind == "linelist" else " ").join(_as_list(value, kind))
    paths = []
    for entry in _as_list(section.get("pythonpath", ""), "args"):
        try:
            rel = validate_relative_path(entry.strip().rstrip("/") or ".")
        except ValueError:
            continue
        paths.append(rel)
    if not paths and any(p.startswith("src/") for p in files) and "src/__init__.py" not in files:
        paths.append("src")
    return {
        "conftest": any(PurePosixPath(p).name == "conftest.py" for p in files),
        "paths": paths,
        "ini": ini,
    }


def _words(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return shlex.split(str(value)) if value else []


@dataclass(frozen=True)
class ProjectLayout:
    """How a repository runs (from its pristine files)."""

    config_name: str | None
    config_text: str
    addopts: tuple[str, ...]
    dropped_addopts: tuple[str, ...]
    import_paths: tuple[str, ...]
    has_conftest: bool
    site_dirs: tuple[str, ...] = field(default=())
    test_patterns: tuple[str, ...] = ("test_*.py", "*_test.py")
    #: ``pythonpath`` names the repository root (``.``) beside other roots: the root's
    #: packages are the project's too (emoji's ``pythonpath = [".", "utils"]``).
    root_on_path: bool = False

    @property
    def source_roots(self) -> tuple[str, ...]:
        """The import roots the project's own modules lie under
        (:func:`is_package_source`): :attr:`import_paths`, with the root (``.``) when
        :attr:`root_on_path`. ``import_paths`` leaves the root out (it is on ``sys.path``
        anyway); without this, a ``pythonpath = [".", "utils"]`` left only ``utils/``
        (a test helper) editable and the package itself read-only."""
        if self.root_on_path and self.import_paths:
            return (*self.import_paths, ".")
        return self.import_paths

    def is_test_file(self, path: str) -> bool:
        """A test module by the project's ``python_files`` patterns (pytest's default:
        ``test_*.py``, ``*_test.py``), matched on the file name as pytest does."""
        import fnmatch

        name = PurePosixPath(path).name
        return (
            path.endswith(".py")
            and name != "conftest.py"
            and any(
                fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(path, p)
                for p in self.test_patterns
            )
        )

    def run(self) -> ProjectRun:
        """The sandbox's view of it (:class:`~forgegym.sandbox.jobs.ProjectRun`)."""
        return ProjectRun(
            config_name=self.config_name,
            config_text=self.config_text,
            addopts=list(self.addopts),
            import_paths=list(self.import_paths),
            site_dirs=list(self.site_dirs),
        )

    def with_site_dirs(self, site_dirs: Sequence[str]) -> ProjectLayout:
        """The same layout with the cached dependency environment's directories."""
        return ProjectLayout(
            self.config_name,
            self.config_text,
            self.addopts,
            self.dropped_addopts,
            self.import_paths,
            self.has_conftest,
            tuple(site_dirs),
            self.test_patterns,
            self.root_on_path,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "config_name": self.config_name,
            "config_text": self.config_text,
            "addopts": list(self.addopts),
            "dropped_addopts": list(self.dropped_addopts),
            "import_paths": list(self.import_paths),
            "has_conftest": self.has_conftest,
            "site_dirs": list(self.site_dirs),
            "test_patterns": list(self.test_patterns),
            "root_on_path": self.root_on_path,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProjectLayout:
        return cls(
            data.get("config_name"),
            str(data.get("config_text", "")),
            tuple(data.get("addopts", ())),
            tuple(data.get("dropped_addopts", ())),
            tuple(data.get("import_paths", ())),
            bool(data.get("has_conftest", False)),
            tuple(data.get("site_dirs", ())),
            tuple(data.get("test_patterns", ("test_*.py", "*_test.py"))),
            bool(data.get("root_on_path", False)),
        )


def project_layout(files: Mapping[str, str]) -> ProjectLayout:
    """The repository's pytest configuration (the file pytest itself would pick at the
    root: the first of :data:`CONFIG_FILES` with a pytest section, else a
    ``pyproject.toml``), its ``addopts`` reduced to core options, and its import roots
    (its ``pythonpath`` setting, plus ``src`` for a src layout)."""
    name, section = pytest_section(files)
    kept, dropped = reduce_addopts(_words(section.get("addopts", "")))
    paths: list[str] = []
    root_on_path = False
    for entry in _words(section.get("pythonpath", "")):
        raw = entry.strip().rstrip("/") or "."
        if raw == ".":  # the root: always on sys.path, so not an import path to add
            root_on_path = True
            continue
        try:
            rel = validate_relative_path(raw)
        except ValueError:
            continue
        if rel not in paths and rel != ".":
            paths.append(rel)
    if (
        "src" not in paths
        and any(p.startswith("src/") and p.endswith(".py") for p in files)
        and "src/__init__.py" not in files
    ):
        paths.append("src")
    return ProjectLayout(
        config_name=name,
        config_text=files.get(name, "") if name else "",
        addopts=tuple(kept),
        dropped_addopts=tuple(dropped),
        import_paths=tuple(paths),
        has_conftest=any(PurePosixPath(p).name == "conftest.py" for p in files),
        test_patterns=tuple(_words(section.get("python_files", ""))) or ("test_*.py", "*_test.py"),
        root_on_path=root_on_path,
    )


def is_test_file(path: str) -> bool:
    """pytest's default test-file names (``test_*.py``, ``*_test.py``), plus
    ``conftest.py`` (trusted test code: never editable). A project's own
    ``python_files`` patterns are :meth:`ProjectLayout.is_test_file`."""
    name = PurePosixPath(path).name
    return name == "conftest.py" or (
        name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
    )


def is_test_support(path: str) -> bool:
    """A test file (:func:`is_test_file`) or any file under a ``tests``/``test``/
    ``testing`` folder (helpers the tests import): never editable, so a fix cannot
    weaken what the tests check."""
    return is_test_file(path) or bool(set(PurePosixPath(path).parts[:-1]) & _TEST_DIRS)


def is_package_source(path: str, import_paths: Sequence[str] = ()) -> bool:
    """Whether ``path`` is a module of the project's package (editable by default):
    a ``.py`` file under an import root (the repository root or ``src``/``pythonpath``)
    that is not a test, not under docs/examples/scripts/benchmarks, and not a build or
    task script at the top (``setup.py``, ``noxfile.py``, ``docs/conf.py``...)."""
    if not path.endswith(".py") or is_test_support(path):
        return False
    parts = PurePosixPath(path).parts
    roots = [PurePosixPath(r).parts for r in import_paths]
    if roots:
        # A src layout (or pythonpath): the package is what lies under an import root.
        for root_parts in sorted(roots, key=len, reverse=True):
            if parts[: len(root_parts)] == root_parts and len(parts) > len(root_parts):
                parts = parts[len(root_parts) :]
                break
        else:
            return False
    if len(parts) == 1:
        return parts[0] not in NON_PACKAGE_MODULES and not parts[0].startswith(("_", "."))
    return parts[0] not in NON_PACKAGE_DIRS and not parts[0].startswith(".")


def package_names(files: Mapping[str, str], import_paths: Sequence[str] = ()) -> list[str]:
    """The top-level import names of the project's own package(s): what its dependency
    environment must not provide (``ensure_environment(exclude=...)``)."""
    names: set[str] = set()
    for module, path in _module_index(files, import_paths).items():
        if is_package_source(path, import_paths):
            names.add(module.split(".", 1)[0])
    return sorted(names)


def dependency_environment(
    files: Mapping[str, str],
    root: str | Path,
    test_dependencies: Sequence[str] | None = None,
    *,
    cache_dir: str | Path | None = None,
) -> Path | None:
    """The project's test dependencies installed once into the cached environment
    (:func:`~forgegym.tasklib.depenv.ensure_environment`; ``None``: nothing to install):
    ``test_dependencies`` (requirements or local paths relative to ``root``), else what
    the project declares; never its own package.

    Raises:
        ValueError: ``test_dependencies`` is not a list, or a dependency cannot be
            installed.
    """
    from forgegym.tasklib.depenv import declared_test_dependencies, ensure_environment

    if test_dependencies is None:
        requirements = declared_test_dependencies(files)
    elif isinstance(test_dependencies, str) or not isinstance(test_dependencies, Sequence):
        raise ValueError(
            f"test_dependencies: expected a list of requirements, got {test_dependencies!r}"
        )
    else:
        requirements = [str(r) for r in test_dependencies]
    return ensure_environment(
        requirements,
        cache_dir=cache_dir,
        base=Path(root).resolve(),
        exclude=package_names(files, project_layout(files).source_roots),
    )


class ProjectFiles(NamedTuple):
    """A repository as copied: ``files`` (text the agent may see), ``skipped`` (left
    out: over every budget), ``data_files`` (read-only bytes, never shown)."""

    files: dict[str, str]
    skipped: list[str]
    data_files: dict[str, bytes]


def _blob_rank(posix: str) -> tuple[int, str]:
    """Data files of the package and its tests first, then documentation and examples
    (their images rarely matter to a test), each by path (modules before both)."""
    top = posix.split("/", 1)[0]
    return (1 if top in NON_PACKAGE_DIRS else 0, posix)


def read_project(
    root: str | Path,
    *,
    max_file_bytes: int,
    max_files: int,
    max_data_files: int = MAX_DATA_FILES,
    max_data_bytes: int = MAX_DATA_BYTES,
    max_blob_files: int = MAX_BLOB_FILES,
    max_blob_bytes: int = MAX_BLOB_BYTES,
) -> ProjectFiles:
    """The repository as a task copies it: every ``.py`` file, its pytest configuration
    files and its small UTF-8 data files (the ones tests read) as relative POSIX path ->
    text; binary data files (a compiled ``.mo`` catalogue), data over the text budget
    and ``.py`` modules over ``max_file_bytes`` (generated tables) as read-only bytes
    within the data channel's budget; ``skipped`` names the files left out of both, so a
    test that needs one can be told apart.

    Raises:
        ValueError: ``root`` is not a directory, has no Python file, more than
            ``max_files`` of them, or one not UTF-8 (or over ``max_file_bytes`` and over
            the data channel's budget).
    """
    if not isinstance(root, str | Path) or not str(root):
        raise ValueError(f"repo_path: expected a directory path, got {root!r}")
    base = Path(root)
    if not base.is_dir():
        raise ValueError(f"repo_path: {str(root)!r} is not a directory")
    files: dict[str, str] = {}
    skipped: list[str] = []
    # Candidates of the data channel: (path, size, a module that must fit).
    blobs: list[tuple[Path, str, int]] = []
    n_py = n_data = data_bytes = 0
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base)
        dirs = rel.parts[:-1]
        # Package metadata (``*.dist-info``, ``*.egg-info``) is part of the copy: a
        # project reads its own version through ``importlib.metadata`` at import.
        if set(dirs) & SKIP_DIRS or any(d.startswith(".") for d in dirs):
            continue
        posix = rel.as_posix()
        if path.is_symlink() or not path.is_file():
            if path.is_symlink() and path.is_file():
                skipped.append(posix)  # a link may point anywhere: never followed, named
            continue
        size = path.stat().st_size
        if posix.endswith(".py"):
            if size > max_file_bytes:
                # A generated data module: read-only, not shown, copied by content.
                if size > MAX_BLOB_FILE_BYTES:
                    raise ValueError(
                        f"repo_path: {posix} ({size} bytes) is over max_file_bytes="
                        f"{max_file_bytes} and over the data budget ({MAX_BLOB_FILE_BYTES})"
                    )
                blobs.append((path, posix, size))
                continue
            n_py += 1
            if n_py > max_files:
                raise ValueError(f"repo_path: more than max_files={max_files} Python files")
            try:
                files[posix] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"repo_path: {posix} is not UTF-8") from None
            continue
        is_config = posix in CONFIG_FILES
        known = path.suffix.lower() in _DATA_SUFFIXES
        if not is_config and not known and not dirs:
            # Top-level files of unknown kinds (LICENSE, Makefile) are not package data;
            # deeper ones are judged by their content below (a ``.lark`` grammar, a
            # ``conf.spec``, ``METADATA``), not by their suffix.
            continue
        if not is_config and (
            (not known and size > MAX_UNKNOWN_BYTES)
            or size > max_file_bytes
            or n_data >= max_data_files
            or data_bytes + size > max_data_bytes
        ):
            blobs.append((path, posix, size))
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            blobs.append((path, posix, size))
            continue
        if not known and not is_config and "\x00" in text:
            blobs.append((path, posix, size))  # binary that happens to decode
            continue
        files[posix] = text
        if not is_config:
            n_data += 1
            data_bytes += size
    if not n_py:
        raise ValueError(f"repo_path: no Python files under {str(root)!r}")
    data_files: dict[str, bytes] = {}
    blob_bytes = 0
    # Modules first: one that does not fit refuses the repository, a data file does not.
    for path, posix, size in sorted(
        blobs, key=lambda b: (not b[1].endswith(".py"), _blob_rank(b[1]))
    ):
        module = posix.endswith(".py")
        if not module and (
            size > MAX_BLOB_FILE_BYTES
            or len(data_files) >= max_blob_files
            or blob_bytes + size > max_blob_bytes
        ):
            skipped.append(posix)
            continue
        if module and blob_bytes + size > max_blob_bytes:
            raise ValueError(
                f"repo_path: {posix} ({size} bytes) is over max_file_bytes={max_file_bytes} "
                f"and the data files are over their budget ({max_blob_bytes} bytes)"
            )
        data_files[posix] = path.read_bytes()
        blob_bytes += size
    return ProjectFiles(files, sorted(skipped), data_files)


def _module_index(files: Mapping[str, str], import_paths: Sequence[str]) -> dict[str, str]:
    """Dotted module name -> file, for every ``.py`` file under an import root."""
    out: dict[str, str] = {}
    for root in [*import_paths, ""]:
        prefix = "" if root in ("", ".") else root.rstrip("/") + "/"
        for path in files:
            if not path.endswith(".py") or not path.startswith(prefix):
                continue
            parts = path[len(prefix) : -3].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and all(p.isidentifier() for p in parts):
                out.setdefault(".".join(parts), path)
    return out


def _direct_imports(source: str, path: str, index: Mapping[str, str]) -> set[str]:
    """The repository files ``source`` imports (a dotted import also runs its packages'
    ``__init__``); unparsable sources import nothing known."""
    import ast

    from forgegym.rewards import bounded

    tree = bounded.parse_or_none(source)
    if tree is None:
        return set()
    own = next((name for name, file in index.items() if file == path), "")
    package = own if path.endswith("__init__.py") else own.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join([*parts, *([base] if base else [])])
            names.append(base)
            names += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    found: set[str] = set()
    for name in names:
        parts = name.split(".")
        for cut in range(1, len(parts) + 1):
            file = index.get(".".join(parts[:cut]))
            if file is not None:
                found.add(file)
    return found


def imports_of_tests(
    files: Mapping[str, str], import_paths: Sequence[str], test_files: Sequence[str]
) -> dict[str, list[str]]:
    """Test file -> the repository modules it imports, directly or through other
    repository modules (its conftest files included): the modules whose change can
    change its outcome, as far as imports tell."""
    index = _module_index(files, import_paths)
    direct: dict[str, set[str]] = {}

    def imports_of(path: str) -> set[str]:
        if path not in direct:
            direct[path] = _direct_imports(files.get(path, ""), path, index)
        return direct[path]

    out: dict[str, list[str]] = {}
    for test in test_files:
        seeds = {test}
        parts = PurePosixPath(test).parts
        for depth in range(len(parts)):
            conftest = "/".join([*parts[:depth], "conftest.py"])
            if conftest in files:
                seeds.add(conftest)
        seen: set[str] = set()
        queue = list(seeds)
        while queue:
            current = queue.pop()
            for dep in imports_of(current):
                if dep not in seen:
                    seen.add(dep)
                    queue.append(dep)
        out[test] = sorted(seen)
    return out


def graded_test_files(
    test_files: Sequence[str],
    failing_tests: Sequence[str],
    changed: Iterable[str],
    test_imports: Mapping[str, Sequence[str]],
) -> list[str]:
    """The test files repository grading runs for a submission (``RepoGrader`` without
    ``full_suite``): of ``test_files``, in their order, those holding a fail-to-pass test
    and every one importing (:func:`imports_of_tests`) a module in ``changed``. The one
    selection grading, the bank's time limit and the factory's reference checks share:
    a check that ran other files than grading passed markdown's references that crash
    when graded (issue 39)."""
    wanted = {t.partition("::")[0] for t in failing_tests}
    touched = set(changed)
    return [
        path
        for path in test_files
        if path in wanted or touched.intersection(test_imports.get(path, ()))
    ]
