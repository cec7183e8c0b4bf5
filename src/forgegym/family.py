"""Families: one frozen :class:`Family` object per task family, registered once.

A *family* (Bugfix, FlakyRepair, ...) is one folder ``src/forgegym/envs/<family>/``
plus one call to :func:`register_family`. Everything generic in forgegym (the
Gymnasium ids, ``forgegym list / eval / tasks verify / bench``, the baseline
policies, evaluation, vector envs, the TRL reward functions and tool methods, the
conformance tests) iterates over the registered families; nothing outside
``envs/<family>/`` names a family.

How a new family registers
==========================

Put this in ``src/forgegym/envs/<family>/__init__.py`` (the package forgegym
discovers; keep it import-light: the heavy modules are named as ``"module:attr"``
strings and imported only when first used)::

    from forgegym.family import EnvSpec, Family, register_family

    FAMILY = register_family(
        Family(
            name="refactor",                                   # == env_class.family
            envs=(EnvSpec("Forge/Refactor-v0", max_episode_steps=None, kwargs={}),),
            env_class="forgegym.envs.refactor.env:RefactorEnv",  # a ForgeEnv subclass
            task_bank="forgegym.envs.refactor.bank:RefactorTaskBank",  # zero-arg factory
            action_models="forgegym.core.actions:CODE_ACTIONS",  # the env's action models
            grader="forgegym.envs.refactor.grader:RefactorGrader",
            solved="forgegym.envs.refactor.grader:solved",     # (RewardBreakdown) -> bool
            reference="forgegym.envs.refactor.policies:reference_action",  # Task -> str
            partial="forgegym.envs.refactor.policies:partial_action",  # Task -> str | None
            hacks="forgegym.envs.refactor.hacks:HACKS",        # {name: Task -> str}
            baselines="forgegym.envs.refactor.policies:BASELINES",  # {name: Task -> str}
            bench="forgegym.envs.refactor.bench:run_bench",    # () -> None (optional)
            stats="forgegym.envs.refactor.bank:stats",         # (bank) -> {label: count}
            scanners={"refactor": "forgegym.envs.refactor.grader:scan_submission"},
        )
    )

Every field except ``name``, ``envs`` and ``env_class`` is optional. A field is
either the object itself or a ``"module:attr"`` string (``attr`` may be dotted, e.g.
``"pkg.grader:MyGrader.solved"``); ``scanners`` maps names to such references (or is
one reference to such a mapping).

Conventions: with ``package=__name__``, an unset field is found in the family
package by its conventional name, and a reference may be relative to the package
(``".generator:FlakyTaskBank"``). :meth:`Family.in_package` also derives the name
(the package's last component) and the env class (``<package>.env:<Stem>Env``, where
``<Stem>`` is the first id's name: ``Forge/FlakyRepair-v0`` -> ``FlakyRepairEnv``), so a
registration states only what is not conventional::

    FAMILY = register_family(
        Family.in_package(__name__, "Forge/Bugfix-v0", description="repair a module ...")
    )

=============  =============================================  ============================
field          convention (``<package>.<module>:<attr>``)      default without it
=============  =============================================  ============================
``task_bank``  ``bank:<Stem>TaskBank``                         :func:`default_task_bank`
``grader``     ``grader:<Stem>Grader``                         none
``solved``     ``grader:solved``                               :func:`default_solved`
``scanners``   ``grader:scan_submission`` (named ``name``)     none
``reference``  ``policies:reference_action``                   :func:`default_reference_action`
``partial``    ``policies:partial_action``                     none
``hacks``      ``hacks:HACKS``                                 none
``bench``      ``bench:run_bench``                             none
``stats``      ``bank:bank_stats``                             none
=============  =============================================  ============================

Without the convention, ``task_bank`` defaults to the bank of an env built with
default kwargs (:func:`default_task_bank`); ``action_models`` defaults to the code
actions, ``baselines`` to none.

``scanners`` are the family's static anti-hack scans, ``(task, files) ->
[HackFinding]``: the adversarial-source corpus test runs each of them (and every
shared scanner) over hostile sources, so they must stay within the parent's limits
(:mod:`forgegym.rewards.bounded`): over a limit, an ``unverifiable`` finding.

``baselines`` are reference policies that are neither the solution nor hacks (e.g.
Oversight's always-"clean" overseer): ``tasks verify`` reports their mean score and
``forgegym eval --policy baseline:<name>`` plays them. ``eval_stats`` (``Results
->`` pydantic model or ``None``) is the family's own statistics of an eval run
(Oversight: AUROC, detection at 1%/2% FPR, Brier, ECE per domain x corruption);
``forgegym eval`` stores it under ``metadata["reports"]`` of its results file.

Rules the registry enforces or relies on:

* names and env ids are unique: registering a second family with a taken name or
  id raises ``ValueError`` (like reasoning-gym's ``register_dataset``);
* ``env_class`` must be a :class:`~forgegym.core.env.ForgeEnv` subclass whose
  ``family`` class attribute equals ``name`` (checked when it is first resolved);
* the hacks a family names are part of the :class:`Family`, so ``tasks verify``
  and the conformance suite always check all of them (no import side effect can
  drop one);
* ``solved`` is the public success predicate: ``info["success"]``, ``tasks
  verify``, the TRL reward functions and curricula all use it (the env's
  :meth:`~forgegym.core.env.ForgeEnv.solved` must agree with it).

Discovery: :func:`load_families` imports every subpackage of ``forgegym.envs``
(and any ``forgegym.families`` entry point of an installed distribution); each
calls :func:`register_family` once. ``import forgegym`` runs it and registers
every id with Gymnasium. A third-party package or a test module can call
:func:`register_family` itself at any time after ``import forgegym``: its ids
appear in ``gymnasium.registry`` at once, and every generic tool sees it.

This module imports only the standard library: the sandbox child imports family
packages (trusted setup hooks) without importing Gymnasium.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import pkgutil
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forgegym.core.actions import ActionModel
    from forgegym.core.env import ForgeEnv
    from forgegym.core.task import Task, TaskBank
    from forgegym.rewards import RewardBreakdown

__all__ = [
    "ActionFn",
    "EnvSpec",
    "Family",
    "default_reference_action",
    "default_solved",
    "families",
    "family_for_env",
    "family_names",
    "get_family",
    "lazy_exports",
    "load_families",
    "register_family",
    "registered_family",
    "resolve",
    "unregister_family",
]

#: A scripted policy: the action text for a task (``None``: not applicable to it).
ActionFn = Callable[["Task"], "str | None"]


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


def default_reference_action(task: Task) -> str:
    """Replace every file the reference changes with its reference content, then submit."""
    edits = [
        {"path": path, "content": content}
        for path, content in sorted(task.reference.items())
        if task.files.get(path) != content
    ]
    actions: list[dict[str, object]] = []
    if edits:
        actions.append({"action": "edit", "edits": edits})
    actions.append({"action": "submit"})
    return "```json\n" + json.dumps(actions) + "\n```"


def default_solved(breakdown: RewardBreakdown) -> bool:
    """Solved = no gate fired and the score is full."""
    return not breakdown.gates and breakdown.score >= 1.0 - 1e-9


def default_task_bank(family: Family) -> TaskBank:
    """A family without ``task_bank``: build its env once and take the env's bank."""
    env = family.env_class(**dict(family.envs[0].kwargs))
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
    env_class: Any
    #: The family package (``__name__`` of ``envs/<family>/__init__.py``): fields left
    #: unset are then looked up by convention (see the module docstring).
    package: str | None = None
    task_bank: Any = None
    action_models: Any = "forgegym.core.actions:CODE_ACTIONS"
    grader: Any = None
    solved: Any = None
    reference: Any = None
    partial: Any = None
    hacks: Any = None
    baselines: Any = field(default_factory=dict)
    eval_stats: Any = None
    bench: Any = None
    stats: Any = None
    scanners: Any = None
    description: str = ""
    #: How far a reward may move between two gradings of the same completion in fresh
    #: processes. 0 for families graded by exact checks; a family whose reward uses
    #: measured CPU time (Performance) declares its measurement noise here, and the
    #: conformance suite still requires identical success verdicts and gates.
    reward_tolerance: float = 0.0
    #: ``() -> pydantic model``: the family's evaluation statistics (e.g. detection
    #: rates per domain x corruption), served at ``GET /{name}/stats``; default: ``stats``.
    report: Any = None

    @classmethod
    def in_package(cls, package: str, *envs: EnvSpec | str, **given: Any) -> Family:
        """The family of the package ``package`` (pass ``__name__``), stating only what is
        not conventional: ``name`` defaults to the package's last component, ``env_class``
        to ``<package>.env:<Stem>Env`` where ``<Stem>`` is the first id's name
        (``Forge/FlakyRepair-v0`` -> ``FlakyRepairEnv``); the task bank and grader are then
        found as ``<package>.bank:<Stem>TaskBank`` and ``<package>.grader:<Stem>Grader``,
        and every other field by the package conventions. ``given`` are the other fields;
        their references may be relative to the package (``".generator:FlakyTaskBank"``)."""
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
        """The family's action models (what its env's ``action_set`` parses)."""
        return tuple(resolve(self.action_models))

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
        """The family's public success predicate."""
        solved = self._field(self.solved, "grader", "solved", default_solved)
        return bool(solved(breakdown))

    def reference_action(self) -> Callable[[Task], str]:
        """The task's solution as action text (never ``None``: every task has one)."""
        legacy = _legacy_reference(self.name)
        if legacy is not None:
            return legacy  # type: ignore[return-value]
        fn = self._field(self.reference, "policies", "reference_action", None)
        return fn if fn is not None else default_reference_action  # type: ignore[no-any-return]

    def partial_action(self) -> ActionFn | None:
        fn = self._field(self.partial, "policies", "partial_action", None)
        return fn if fn is not None else None

    def hack_actions(self) -> dict[str, ActionFn]:
        """Every known hack of the family, by name (sorted), including those added
        through the legacy :func:`forgegym.policies.registry.register_hack`."""
        hacks = dict(self._field(self.hacks, "hacks", "HACKS", {}))
        for hack in hacks:
            _check_hack_name(hack)
        with _LOCK:
            hacks.update(_EXTRA_HACKS.get(self.name, {}))
        return dict(sorted(hacks.items()))

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

    def patch_scanners(self) -> dict[str, Callable[[Task, Mapping[str, str]], list[Any]]]:
        """The family's static anti-hack scanners, by name: ``(task, files) ->
        [HackFinding]`` over a submission's files (bounded: over the parent's limits
        they return an ``unverifiable`` finding, never raise)."""
        if self.scanners is None:
            found = self._field(None, "grader", "scan_submission", None)
            return {self.name: found} if found is not None else {}
        return {name: resolve(fn) for name, fn in dict(resolve(self.scanners)).items()}

    def module_scanners(self) -> dict[str, Callable[..., list[Any]]]:
        """The family's own module scanners (``(pristine, patched, path) -> [HackFinding]``)
        in the shared registry, by kind. By convention they live in
        ``<package>.antihack`` and register with ``family=<name>``; that module is
        imported here, so what a family registers is always found."""
        if self.package is not None:
            name = f"{self.package}.antihack"
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


# ------------------------------------------------------------------ registry
_LOCK = threading.RLock()
_FAMILIES: dict[str, Family] = {}
_EXTRA_HACKS: dict[str, dict[str, ActionFn]] = {}
_EXTRA_REFERENCES: dict[str, ActionFn] = {}
_GYM_ACTIVE = False
_LOADED = False


def register_family(family: Family) -> Family:
    """Register ``family``; its ids become Gymnasium ids. Returns ``family``.

    Raises ``ValueError`` if the name or one of its ids is already registered.
    """
    if not isinstance(family, Family):
        raise ValueError(f"family: expected a Family, got {type(family).__name__}")
    with _LOCK:
        if family.name in _FAMILIES:
            raise ValueError(f"name: family {family.name!r} is already registered")
        taken = {i for f in _FAMILIES.values() for i in f.env_ids}
        clash = sorted(set(family.env_ids) & taken)
        if clash or len(set(family.env_ids)) != len(family.env_ids):
            raise ValueError(f"envs: env ids {clash or list(family.env_ids)} are already taken")
        _FAMILIES[family.name] = family
        if _GYM_ACTIVE:
            _register_with_gymnasium(family)
    return family


def unregister_family(name: str) -> None:
    """Remove a family (and its Gymnasium ids); for tests and notebooks."""
    with _LOCK:
        family = _FAMILIES.pop(name, None)
        _EXTRA_HACKS.pop(name, None)
    if family is not None and _GYM_ACTIVE:
        import gymnasium as gym

        for env_id in family.env_ids:
            gym.registry.pop(env_id, None)


def _register_with_gymnasium(family: Family) -> None:
    import gymnasium as gym

    for spec in family.envs:
        if spec.env_id in gym.registry:
            continue
        gym.register(
            id=spec.env_id,
            entry_point=family.env_class,
            kwargs=dict(spec.kwargs),
            max_episode_steps=spec.max_episode_steps,
        )


def activate_gymnasium() -> None:
    """Register every loaded family's ids with Gymnasium, and every later one too."""
    global _GYM_ACTIVE
    with _LOCK:
        _GYM_ACTIVE = True
        for family in _FAMILIES.values():
            _register_with_gymnasium(family)


def load_families() -> None:
    """Import every family package under ``forgegym.envs`` (and ``forgegym.families``
    entry points) once; each registers itself."""
    global _LOADED
    with _LOCK:
        if _LOADED:
            return
        _LOADED = True
        import forgegym.envs as envs_pkg

        for info in sorted(pkgutil.iter_modules(envs_pkg.__path__), key=lambda i: i.name):
            if info.ispkg:
                importlib.import_module(f"{envs_pkg.__name__}.{info.name}")
        from importlib.metadata import entry_points

        for entry in entry_points(group="forgegym.families"):
            entry.load()


def families() -> tuple[Family, ...]:
    """Every registered family, in registration order (forgegym's own first)."""
    load_families()
    with _LOCK:
        return tuple(_FAMILIES.values())


def registered_family(name: str) -> Family | None:
    """The family registered as ``name``, or ``None`` (no error; for env fallbacks)."""
    load_families()
    with _LOCK:
        return _FAMILIES.get(name)


def family_names() -> list[str]:
    return [f.name for f in families()]


def get_family(name: str) -> Family:
    """The family registered as ``name``; ``ValueError`` naming the known ones otherwise."""
    load_families()
    with _LOCK:
        if name in _FAMILIES:
            return _FAMILIES[name]
    raise ValueError(f"family: unknown family {name!r}; registered: {family_names()}")


def family_for_env(env_id: str) -> Family:
    """The family that registered ``env_id`` (``"forgegym:"`` prefixes are accepted)."""
    bare = env_id.split(":", 1)[1] if ":" in env_id else env_id
    for family in families():
        if bare in family.env_ids:
            return family
    raise ValueError(f"env_id: {env_id!r} is not a registered forgegym id")


def iter_env_specs() -> Iterator[tuple[Family, EnvSpec]]:
    for family in families():
        for spec in family.envs:
            yield family, spec


def _add_legacy_hack(family: str, name: str, fn: ActionFn) -> None:
    _check_hack_name(name)
    with _LOCK:
        _EXTRA_HACKS.setdefault(family, {})[name] = fn


def _add_legacy_reference(family: str, fn: ActionFn) -> None:
    with _LOCK:
        _EXTRA_REFERENCES[family] = fn


def _legacy_reference(family: str) -> ActionFn | None:
    with _LOCK:
        return _EXTRA_REFERENCES.get(family)
