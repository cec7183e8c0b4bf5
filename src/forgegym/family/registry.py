"""The family registry: one duplicate-checked registration per family (like
reasoning-gym's ``register_dataset``), the families of installed distributions, and
their ids with Gymnasium.

The registry knows no family and imports nothing above it: forgegym's own families are
imported by the package root (``forgegym/__init__.py``, as ``gymnasium/__init__.py``
imports ``gymnasium.envs``), each registering itself; :func:`load_families` loads the
families of installed distributions (``forgegym.families`` entry points). Standard
library only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from forgegym.family.spec import EnvSpec, Family

__all__ = [
    "activate_gymnasium",
    "families",
    "family_for_env",
    "family_names",
    "get_family",
    "iter_env_specs",
    "load_families",
    "register_family",
    "registered_family",
    "unregister_family",
]

_LOCK = threading.RLock()
_FAMILIES: dict[str, Family] = {}
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
            # a "module:attr" string (Gymnasium resolves it alike) or the env class
            entry_point=family.env_class,  # type: ignore[arg-type]
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
    """Load the families of installed distributions (``forgegym.families`` entry points)
    once; each registers itself. forgegym's own are already registered: importing any
    ``forgegym`` module runs the package root, which imports them
    (:func:`forgegym.discover_families`)."""
    global _LOADED
    with _LOCK:
        if _LOADED:
            return
        _LOADED = True
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
