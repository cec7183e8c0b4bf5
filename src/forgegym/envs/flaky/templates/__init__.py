"""Scenario templates of the root-cause taxonomy.

Each template is a function ``(v: Variant) -> Draft``: it renders a small package
(source under test, shared local fakes), a test file whose ``target`` test is flaky
under the chaos schedule, the reference fix (full fixed contents), a mutant of the
fixed source (the power check: the repaired test must fail on it) and, where it
for some templates a *partial* fix. A partial fix is legitimate: it removes one of two
independent root causes (one of two polluters, caches, shared attributes or clock
uses), so the pass rate under the chaos schedule rises but stays below 1.0, and it
adds nothing an anti-hack scan flags (waiting longer is a hack, never a partial fix).
"""

from __future__ import annotations

from collections.abc import Callable

from forgegym.envs.flaky.templates.async_wait import async_fire_and_forget, async_unawaited
from forgegym.envs.flaky.templates.base import Draft, Variant
from forgegym.envs.flaky.templates.concurrency import (
    concurrency_lost_update,
    concurrency_worker_pool,
)
from forgegym.envs.flaky.templates.fixture_scope_leak import fixture_module_scope
from forgegym.envs.flaky.templates.import_side_effect import import_salt
from forgegym.envs.flaky.templates.mock_residue import mock_assignment, mock_unstopped
from forgegym.envs.flaky.templates.module_cache_pollution import cache_lru, cache_mutable_result
from forgegym.envs.flaky.templates.network import network_broker, network_remote_default
from forgegym.envs.flaky.templates.non_idempotent import nonidem_init, nonidem_register
from forgegym.envs.flaky.templates.nondeterminism import nondet_sample, nondet_tiebreak
from forgegym.envs.flaky.templates.order_dependency import order_brittle, order_polluter
from forgegym.envs.flaky.templates.platform_dependency import (
    platform_clock,
    platform_locale,
    platform_tz,
)
from forgegym.envs.flaky.templates.resource_leak import leak_pool
from forgegym.envs.flaky.templates.shared_state import shared_class_attr, shared_mutable_default

__all__ = ["CATEGORIES", "TEMPLATES", "Draft", "Variant"]

CATEGORIES: tuple[str, ...] = (
    "async_wait",
    "concurrency",
    "test_order_dependency",
    "non_idempotent",
    "resource_leak",
    "shared_state",
    "network",
    "platform_dependency",
    "nondeterminism",
    "import_side_effect",
    "module_cache_pollution",
    "fixture_scope_leak",
    "mock_residue",
)

TEMPLATES: dict[str, dict[str, Callable[[Variant], Draft]]] = {
    "async_wait": {"unawaited": async_unawaited, "fire_and_forget": async_fire_and_forget},
    "concurrency": {"lost_update": concurrency_lost_update, "worker_pool": concurrency_worker_pool},
    "test_order_dependency": {"polluter": order_polluter, "brittle": order_brittle},
    "non_idempotent": {"register": nonidem_register, "init": nonidem_init},
    "resource_leak": {"pool": leak_pool},
    "shared_state": {"mutable_default": shared_mutable_default, "class_attr": shared_class_attr},
    "network": {"remote_default": network_remote_default, "broker": network_broker},
    "platform_dependency": {"tz": platform_tz, "locale": platform_locale, "clock": platform_clock},
    "nondeterminism": {"tiebreak": nondet_tiebreak, "shuffle": nondet_sample},
    "import_side_effect": {"salt": import_salt},
    "module_cache_pollution": {"lru": cache_lru, "mutable_result": cache_mutable_result},
    "fixture_scope_leak": {"module_scope": fixture_module_scope},
    "mock_residue": {"unstopped": mock_unstopped, "assignment": mock_assignment},
}
