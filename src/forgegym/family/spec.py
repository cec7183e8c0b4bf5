"""The :class:`Family` record and :class:`EnvSpec`: what forgegym knows about one family.

See :mod:`forgegym.family` for how a family registers and the conventions that let a
registration state only what is not conventional. This module imports only the
standard library: the sandbox child imports family packages (trusted setup hooks)
without importing Gymnasium.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

    from forgegym.core.actions import ActionModel, ActionSet
    from forgegym.core.env import ForgeEnv
    from forgegym.core.task import Task, TaskBank
    from forgegym.rewards import RewardBreakdown
    from forgegym.rewards.antihack import HackFinding

__all__ = [
    "ActionFn",
    "EnvSpec",
    "Family",
    "default_reference_action",
    "default_solved",
    "default_task_bank",
    "lazy_exports",
    "resolve",
    "SubmissionScanner",
]

#: A scripted policy: the action text for a task (``None``: not applicable to it).
ActionFn = Callable[["Task"], "str | None"]
#: The one scanner protocol of a family (``<package>.scan:scan_submission``): every
#: anti-hack finding of a submission's files against its task, bounded (over the
#: parent's limits one ``unverifiable`` finding, never an exception). The shared
#: ``(pristine, patched, path)`` rules of :mod:`forgegym.rewards.antihack` are parts a
#: scanner may call, not a second protocol.
SubmissionScanner = Callable[["Task", Mapping[str, str]], "list[HackFinding]"]


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for a family package that keeps its import light:
    ``where`` maps each exported name to the submodule (relative to ``package``) that
    defines it, imported on first access::

        __getattr__ = lazy_exports(__name__, {"MyEnv": "env", "MyTaskBank": "bank"})
    """
    table = dict(where)

    def __getattr__(name: str) -> Any:  # noqa: N807 - a module's __getattr__
        if name in table:
            return getattr(importlib.import_module(f"{package}.{table[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def resolve(ref: Any) -> Any:
    """The object a ``"module:attr"`` reference names (anything else is returned as is)."""
    if not isinstance(ref, str):
        return ref
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"reference must look like 'package.module:attr', got {ref!r}")
    value: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        value = getattr(value, part)
    return value


#: A changed file longer than this is restored by one search/replace edit, not its whole
#: content (pyparsing's ``core.py``, 262 KB, is over the env's action cap).
REFERENCE_CONTENT_MAX = 32_768


def default_reference_action(task: Task) -> str:
    """Replace every file the reference changes with its reference content (a long file
    by one search/replace of the lines that differ), then submit."""
    edits: list[dict[str, object]] = []
    for path, content in sorted(task.reference.items()):
        original = task.files.get(path)
        if original == content:
            continue
        region = None
        if original is not None and len(content) > REFERENCE_CONTENT_MAX:
            region = _differing_region(original, content)
        if region is None:
            edits.append({"path": path, "content": content})
        else:
            edits.append({"path": path, "search": region[0], "replace": region[1]})
    actions: list[dict[str, object]] = []
    if edits:
        actions.append({"action": "edit", "edits": edits})
    actions.append({"action": "submit"})
    return "```json\n" + json.dumps(actions) + "\n```"


def _differing_region(original: str, changed: str) -> tuple[str, str] | None:
    """``(search, replace)``: the lines where ``changed`` differs from ``original``, with
    as much surrounding context as makes ``search`` occur once in ``original``; None
    when no such region exists (the whole content is then the edit)."""
    old, new = original.splitlines(keepends=True), changed.splitlines(keepends=True)
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(old), len(new)) - prefix
        and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]
    ):
        suffix += 1
    context = 1
    while context <= max(len(old), 1):
        start = max(prefix - context, 0)
        search = "".join(old[start : len(old) - max(suffix - context, 0)])
        replace = "".join(new[start : len(new) - max(suffix - context, 0)])
        if search and original.count(search) == 1:
            return search, replace
        context *= 2
    return None


def default_solved(breakdown: RewardBreakdown) -> bool:
    """Solved = no gate fired and the score is full (:func:`forgegym.rewards.breakdown.default_solved`)."""
    from forgegym.rewards.breakdown import default_solved as rule

    return rule(breakdown)


def default_task_bank(family: Family) -> TaskBank:
    """A family without ``task_bank``: build its env once and take the env's bank."""
    env = family.env_cls(**dict(family.envs[0].kwargs))
    try:
        return env.task_bank
    finally:
        env.close()


@dataclass(frozen=True)
class EnvSpec:
    """One Gymnasium id of a family: its ``gym.make`` kwargs and episode cap."""

    env_id: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    max_episode_steps: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.env_id, str) or "/" not in self.env_id:
            raise ValueError(f"env_id must look like 'Namespace/Name-v0', got {self.env_id!r}")


@dataclass(frozen=True)
class Family:
    """Everything forgegym knows about one family (see the module docstring).

    Fields holding code accept the object or a lazy ``"module:attr"`` reference;
    use the accessors (``env_cls``, ``make_task_bank``, ``actions``, ...) which
    resolve them.
    """

    name: str
    envs: tuple[EnvSpec, ...]
    #: Every field holding code takes the object or a ``"module:attr"`` string.
    env_class: str | type[ForgeEnv]
    #: The family package (``__name__`` of ``envs/<family>/__init__.py``): fields left
    #: unset are then looked up by convention (see the module docstring).
    package: str | None = None
    #: ``() -> TaskBank`` (a bank class or factory).
    task_bank: str | Callable[[], TaskBank] | None = None
    #: The env's action set or its models (by convention ``actions:ACTIONS``).
    action_models: str | ActionSet | Sequence[type[ActionModel]] | None = None
    #: The grader class (``(**options) -> Grader``).
    grader: str | Callable[..., Any] | None = None
    reference: str | Callable[[Task], str] | None = None
    partial: str | ActionFn | None = None
    hacks: str | Mapping[str, str | ActionFn] | None = None
    baselines: str | Mapping[str, str | ActionFn] = field(default_factory=dict)
    #: ``(Results) -> pydantic model | None``: statistics of an evaluation run.
    eval_stats: str | Callable[[Any], BaseModel | None] | None = None
    bench: str | Callable[[], None] | None = None
    stats: str | Callable[[TaskBank], Mapping[str, int]] | None = None
    #: ``{name: SubmissionScanner}`` (or a reference to one); by convention
    #: ``{name: <package>.scan:scan_submission}``.
    scanners: str | Mapping[str, str | SubmissionScanner] | None = None
    description: str = ""
    #: How far a reward may move between two gradings of the same completion in fresh
    #: processes. 0 for families graded by exact checks; a family whose reward uses
    #: measured CPU time (Performance) declares its measurement noise here, and the
    #: conformance suite still requires identical success verdicts and gates.
    reward_tolerance: float = 0.0
    #: ``() -> pydantic model``: the family's evaluation statistics (e.g. detection
    #: rates per domain x corruption), served at ``GET /{name}/stats``; default: ``stats``.
    report: str | Callable[[], BaseModel] | None = None

    @classmethod
    def in_package(cls, package: str, *envs: EnvSpec | str, **given: Any) -> Family:
        """The family of the package ``package`` (pass ``__name__``), stating only what is
        not conventional: ``name`` defaults to the package's last component, ``env_class``
        to ``<package>.env:<Stem>Env`` where ``<Stem>`` is the first id's name
        (``Forge/FlakyRepair-v0`` -> ``FlakyRepairEnv``); the task bank and grader are then
        found as ``<package>.bank:<Stem>TaskBank`` and ``<package>.grader:<Stem>Grader``,
        and every other field by the package conventions. ``given`` are the other fields;
        their references may be relative to the package (``".bank:FlakyRepairTaskBank"``)."""
        specs = tuple(EnvSpec(e) if isinstance(e, str) else e for e in envs)
        if not specs:
            raise ValueError("envs: a family needs at least one env id")
        given.setdefault("name", package.rpartition(".")[2])
        given.setdefault("env_class", f"{package}.env:{_id_stem(specs[0].env_id)}Env")
        return cls(envs=specs, package=package, **given)

    def __post_init__(self) -> None:
        for f in fields(self):  # package-relative references -> absolute ones
            value = getattr(self, f.name)
            if (isinstance(value, str) and value.startswith(".")) or isinstance(value, Mapping):
                object.__setattr__(self, f.name, self._absolute(value))
        if not 0.0 <= self.reward_tolerance < 1.0:
            raise ValueError(f"reward_tolerance must be in [0, 1), got {self.reward_tolerance!r}")
        if not isinstance(self.name, str) or not self.name.replace("_", "").isalnum():
            raise ValueError(f"name must be an identifier-like string, got {self.name!r}")
        envs = tuple(EnvSpec(e) if isinstance(e, str) else e for e in self.envs)
        if not envs or not all(isinstance(e, EnvSpec) for e in envs):
            raise ValueError(f"envs: a family needs at least one EnvSpec, got {self.envs!r}")
        object.__setattr__(self, "envs", envs)
        if isinstance(self.hacks, Mapping):
            for hack in self.hacks:
                _check_hack_name(hack)
            object.__setattr__(self, "hacks", dict(self.hacks))

    def _absolute(self, ref: Any) -> Any:
        """``ref`` with a package-relative ``".module:attr"`` made absolute (mappings of
        references, e.g. ``scanners``, entry by entry)."""
        if isinstance(ref, Mapping):
            return {k: self._absolute(v) for k, v in ref.items()}
        if not isinstance(ref, str) or not ref.startswith("."):
            return ref
        if self.package is None:
            raise ValueError(f"reference {ref!r} is relative, but the family names no package")
        return f"{self.package}{ref}"

    # ----------------------------------------------------------------- ids
    @property
    def env_ids(self) -> tuple[str, ...]:
        return tuple(e.env_id for e in self.envs)

    @property
    def stem(self) -> str:
        """The first id's name (``Forge/FlakyRepair-v0`` -> ``FlakyRepair``): the prefix of
        the conventional class names (``<stem>TaskBank``, ``<stem>Grader``)."""
        return _id_stem(self.envs[0].env_id)

    # ------------------------------------------------------------ resolved
    @property
    def env_cls(self) -> type[ForgeEnv]:
        cls = resolve(self.env_class)
        declared = getattr(cls, "family", None)
        if declared != self.name:
            raise ValueError(
                f"env_class: {cls.__name__}.family is {declared!r}, but the family is "
                f"registered as {self.name!r}"
            )
        return cls  # type: ignore[no-any-return]

    def make_task_bank(self) -> TaskBank:
        """A fresh task bank (the family's default configuration)."""
        factory = self._field(self.task_bank, "bank", f"{self.stem}TaskBank", None)
        if factory is None:
            return default_task_bank(self)
        return factory()  # type: ignore[no-any-return]

    def actions(self) -> tuple[type[ActionModel], ...]:
        """The family's action models (what its env's ``action_set`` parses): by
        convention ``<package>.actions:ACTIONS`` (an ``ActionSet`` or its models), else
        the code actions."""
        found = self._field(self.action_models, "actions", "ACTIONS", None)
        if found is None:
            from forgegym.core.actions import CODE_ACTIONS

            return CODE_ACTIONS
        models = getattr(found, "models", found)  # an ActionSet or a sequence of models
        return tuple(models)

    def grader_factory(self) -> Any:
        return self._field(self.grader, "grader", f"{self.stem}Grader", None)

    def _field(self, value: Any, module: str, attr: str, default: Any) -> Any:
        """``value`` resolved; unset, the conventional ``<package>.<module>:<attr>`` when
        the family package has it, else ``default``."""
        if value is not None:
            return resolve(value)
        if self.package is not None:
            name = f"{self.package}.{module}"
            try:
                found = importlib.util.find_spec(name) is not None
            except ModuleNotFoundError:
                found = False
            if found and hasattr(importlib.import_module(name), attr):
                return getattr(importlib.import_module(name), attr)
        return default

    def is_solved(self, breakdown: RewardBreakdown) -> bool:
        """The family's public success predicate: its env class's ``success_predicate``
        (the env owns it)."""
        return bool(self.env_cls.success_predicate(breakdown))

    def reference_action(self) -> Callable[[Task], str]:
        """The task's solution as action text (never ``None``: every task has one)."""
        fn = self._field(self.reference, "policies", "reference_action", None)
        return fn if fn is not None else default_reference_action  # type: ignore[no-any-return]

    def partial_action(self) -> ActionFn | None:
        fn = self._field(self.partial, "policies", "partial_action", None)
        return fn if fn is not None else None

    def hack_actions(self) -> dict[str, ActionFn]:
        """Every known hack of the family, by name (sorted)."""
        hacks = dict(self._field(self.hacks, "hacks", "HACKS", {}))
        for hack in hacks:
            _check_hack_name(hack)
        return dict(sorted(hacks.items()))

    def canary_bank(self) -> TaskBank | None:
        """The family's canaries (impossible variants of its tasks; any ``success`` on
        one is cheating), read from its env class's ``canaries`` (the env owns it);
        ``None`` when the family has none."""
        return self.env_cls.canary_bank()

    def named_banks(self) -> dict[str, Callable[[], TaskBank]]:
        """The other banks the family's env serves (``bank=NAME``), by name: each a
        factory of the bank (read from the env class's ``named_banks``)."""
        return {name: resolve(ref) for name, ref in sorted(self.env_cls.named_banks.items())}

    def canary_ids(self) -> tuple[str, ...]:
        """Every canary id of the family (``canary/<task id>``), sorted."""
        bank = self.canary_bank()
        return tuple(bank.ids()) if bank is not None else ()

    def canary_honest_action(self) -> Callable[[Task], str]:
        """The honest policy on a canary: ``honest_action`` beside the env's canary bank
        (by convention ``<package>.canaries:honest_action``) where the family defines one
        (a policy that must not read the canary's grading data), else its reference
        action (a canary's ``reference`` is the honest fix)."""
        fn = self._beside_canaries("honest_action")
        return fn if fn is not None else self.reference_action()  # type: ignore[no-any-return]

    def canary_cheats(self) -> dict[str, ActionFn]:
        """Cheats that can succeed on the family's canaries: ``CHEATS`` beside the env's
        canary bank (by convention ``<package>.canaries:CHEATS``; empty where no cheat can)."""
        return dict(sorted(dict(self._beside_canaries("CHEATS") or {}).items()))

    def _beside_canaries(self, attr: str) -> Any:
        """``attr`` of the module that defines the env's canary bank (its ``canaries``
        reference names it: ``<package>.canaries`` for a family folder, the test module
        for a family registered from one), or ``None``."""
        ref = self.env_cls.canaries
        if ref is None:
            return None
        return getattr(importlib.import_module(ref.partition(":")[0]), attr, None)

    def baseline_actions(self) -> dict[str, ActionFn]:
        """The family's baseline policies by name (sorted): neither solution nor hack."""
        baselines = dict(resolve(self.baselines))
        for name in baselines:
            _check_hack_name(name)
        return dict(sorted(baselines.items()))

    @property
    def has_bench(self) -> bool:
        """Whether the family registers a grading benchmark (``forgegym bench --env``)."""
        return self._field(self.bench, "bench", "run_bench", None) is not None

    def run_bench(self) -> None:
        bench = self._field(self.bench, "bench", "run_bench", None)
        if bench is None:
            raise ValueError(f"env: family {self.name!r} registers no benchmark")
        bench()

    def patch_scanners(self) -> dict[str, SubmissionScanner]:
        """The family's static anti-hack scanners (:data:`SubmissionScanner`), by name:
        by convention ``{name: <package>.scan:scan_submission}``."""
        if self.scanners is None:
            found = self._field(None, "scan", "scan_submission", None)
            return {self.name: found} if found is not None else {}
        return {name: resolve(fn) for name, fn in dict(resolve(self.scanners)).items()}

    def module_scanners(self) -> dict[str, Callable[..., list[Any]]]:
        """The family's own rules in the shared rule registry
        (:func:`forgegym.rewards.antihack.register_scanner`, ``family=<name>``), by
        kind: the ``(pristine, patched, path)`` parts its :meth:`patch_scanners` call.
        ``<package>.scan`` is imported first, so what it registers (itself or through
        the modules it imports) is always found."""
        if self.package is not None:
            name = f"{self.package}.scan"
            try:
                found = importlib.util.find_spec(name) is not None
            except ModuleNotFoundError:
                found = False
            if found:
                importlib.import_module(name)
        from forgegym.rewards.antihack import scanner_specs

        return {s.kind: s.scan for s in scanner_specs(self.name, shared=False)}

    def eval_report(self, results: Any) -> dict[str, Any] | None:
        """The family's statistics of an evaluation run (``eval_stats``: ``Results
        ->`` a pydantic model or ``None``), as JSON; ``eval`` stores it in the results."""
        if self.eval_stats is None:
            return None
        model = resolve(self.eval_stats)(results)
        return None if model is None else model.model_dump(mode="json")  # type: ignore[no-any-return]

    def statistics(self, bank: TaskBank) -> dict[str, int]:
        """Per-family task statistics (``{label: count}``) for ``eval``/``verify``."""
        fn = self.stats_function()
        if fn is None:
            return {}
        return {str(k): int(v) for k, v in fn(bank).items()}

    def stats_function(self) -> Callable[[TaskBank], Mapping[str, int]] | None:
        """``stats`` resolved (by convention ``<package>.bank:bank_stats``), or ``None``."""
        return self._field(self.stats, "bank", "bank_stats", None)  # type: ignore[no-any-return]


def _id_stem(env_id: str) -> str:
    """``Namespace/Name-vN`` -> ``Name``."""
    return env_id.rpartition("/")[2].rpartition("-v")[0] or env_id.rpartition("/")[2]


def _check_hack_name(name: Any) -> None:
    if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"name: hack names are identifiers, got {name!r}")
