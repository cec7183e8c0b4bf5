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
            action_models="forgegym.envs.refactor.actions:ACTIONS",  # the env's ActionSet
            grader="forgegym.envs.refactor.grader:RefactorGrader",
            reference="forgegym.envs.refactor.policies:reference_action",  # Task -> str
            partial="forgegym.envs.refactor.policies:partial_action",  # Task -> str | None
            hacks="forgegym.envs.refactor.hacks:HACKS",        # {name: Task -> str}
            baselines="forgegym.envs.oversight.policies:BASELINES",  # {name: Task -> str}
            bench="forgegym.envs.refactor.bench:run_bench",    # () -> None (optional)
            stats="forgegym.envs.refactor.bank:bank_stats",    # (bank) -> {label: count}
            scanners={"refactor": "forgegym.envs.refactor.scan:scan_submission"},
        )
    )

(``baselines`` borrows Oversight's here only to show the shape: Refactor has none.)
The success predicate is not a field: the env class owns it
(the static method ``success_predicate`` of the :class:`~forgegym.core.env.ForgeEnv`
subclass), and :meth:`Family.is_solved` reads it from there.

Every field except ``name``, ``envs`` and ``env_class`` is optional. A field is
either the object itself or a ``"module:attr"`` string (``attr`` may be dotted, e.g.
``"pkg.grader:MyGrader.method"``); ``scanners`` maps names to such references (or is
one reference to such a mapping).

Conventions: with ``package=__name__``, an unset field is found in the family
package by its conventional name, and a reference may be relative to the package
(``".bank:FlakyRepairTaskBank"``). :meth:`Family.in_package` also derives the name
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
``actions``    ``actions:ACTIONS`` (an ``ActionSet``)          the code actions
``scanners``   ``scan:scan_submission`` (named ``name``)       none
``reference``  ``policies:reference_action``                   :func:`default_reference_action`
``partial``    ``policies:partial_action``                     none
``hacks``      ``hacks:HACKS``                                 none
``bench``      ``bench:run_bench``                             none
``stats``      ``bank:bank_stats``                             none
=============  =============================================  ============================

Without the convention, ``task_bank`` defaults to the bank of an env built with
default kwargs (:func:`default_task_bank`); ``action_models`` (the ``actions`` row)
defaults to the code actions, ``baselines`` to none.

``scanners`` are the family's static anti-hack scans, one protocol
(:data:`SubmissionScanner`, ``(task, files) -> [HackFinding]``, in ``scan.py``); the
``(pristine, patched, path)`` rules of :mod:`forgegym.rewards.antihack` are parts a
scanner calls, and a family's own rules register when its ``scan.py`` is imported. the adversarial-source corpus test runs each of them (and every
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
* the env class's ``success_predicate`` is the public success predicate:
  ``info["success"]``, ``tasks verify``, the TRL reward functions and curricula all
  use it, through :meth:`~forgegym.core.env.ForgeEnv.solved` or
  :meth:`Family.is_solved`.

Discovery: the package root (:func:`forgegym.discover_families`) imports every
subpackage of ``forgegym.envs``, and :func:`load_families` any ``forgegym.families``
entry point of an installed distribution; each calls :func:`register_family` once. ``import forgegym`` runs it and registers
every id with Gymnasium. A third-party package or a test module can call
:func:`register_family` itself at any time after ``import forgegym``: its ids
appear in ``gymnasium.registry`` at once, and every generic tool sees it.

This module imports only the standard library: the sandbox child imports family
packages (trusted setup hooks) without importing Gymnasium.
"""

from __future__ import annotations

from forgegym.family.registration import EnvSpecEntry, env_ids, env_specs, register_envs
from forgegym.family.registry import (
    activate_gymnasium,
    families,
    family_for_env,
    family_names,
    get_family,
    iter_env_specs,
    load_families,
    register_family,
    registered_family,
    unregister_family,
)
from forgegym.family.spec import (
    ActionFn,
    EnvSpec,
    Family,
    SubmissionScanner,
    default_reference_action,
    default_solved,
    default_task_bank,
    lazy_exports,
    resolve,
)

__all__ = [
    "ActionFn",
    "EnvSpec",
    "EnvSpecEntry",
    "Family",
    "SubmissionScanner",
    "activate_gymnasium",
    "default_reference_action",
    "default_solved",
    "default_task_bank",
    "env_ids",
    "env_specs",
    "families",
    "family_for_env",
    "family_names",
    "get_family",
    "iter_env_specs",
    "lazy_exports",
    "load_families",
    "register_envs",
    "register_family",
    "registered_family",
    "resolve",
    "unregister_family",
]
