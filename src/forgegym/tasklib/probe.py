"""Behaviour probes of one function of a real project: values as tagged plain JSON.

Self-contained (standard library only) on purpose: the sandbox stages this one file as a
trusted call driver (``CallSpec(target="forgegym.tasklib.probe:call")``), and the task
factory's recorder copies it beside its pytest plugin, where forgegym is not importable.

Encoding (:func:`encode`): JSON-compatible builtins stay as they are (``None``, ``bool``,
``int``, ``str``, finite ``float``, ``list``); every other value becomes a one-key dict
whose key starts with ``$``: ``$tuple``, ``$dict`` (a list of ``[key, value]`` pairs, in
order), ``$set``/``$frozenset`` (members sorted by their JSON text), ``$bytes``/
``$bytearray`` (hex), ``$memoryview`` (a one-dimensional view of bytes: its bytes in
hex and whether it is read-only), ``$float`` (``nan``, ``inf``, ``-inf``),
``$complex``, ``$ref`` (a class or function named ``module:qualname`` that resolves to that very object),
``$module`` (an allowed module, by name), ``$bound`` (a method bound to an encodable
object: the object and the method's name) and
``$reduce`` (``[callable, args, state, list items, dict items]``, pickle's own recipe from
``__reduce_ex__(4)``, or the reducer :mod:`copyreg` registers for the type, as pickle
looks it up first: compiled patterns, for instances of the project's classes and of a
few standard modules), ``$str`` (a string holding lone surrogates, as UTF-8 with
``surrogatepass``, hex: JSON writers refuse them), ``$match`` (a regular expression
match: its pattern, string, ``pos``, ``endpos`` and the method, ``match``, ``search``
or ``fullmatch``, that gives the very same groups again; from where it starts when not
from its ``pos``) and ``$default`` (a function
with no importable name, a lambda, that is the default value of a parameter of a
function that has one: ``[module:qualname, index]`` into ``__defaults__``, or the name
of a keyword-only parameter). Outputs may also hold ``$iter`` (an iterator's first items) and ``$opaque`` (a
type name: a value that cannot be encoded, compared by its type only).

Decoding (:func:`decode`) rebuilds a value the way pickle would, but only from callables
of the allowed modules (the project's top-level packages and :data:`STDLIB`): it never
imports anything else.

:func:`call` is what the sandbox child runs: decode the receiver and arguments, call the
function, and return ``{"r": result, "self": receiver after, "args": arguments after}``,
encoded. What the call raises is the call's outcome (the harness reports its type); a
failure to rebuild the inputs raises :class:`ProbeInputError`, so the parent can tell a
call it cannot reproduce from a call that fails.
"""

from __future__ import annotations

import copyreg
import importlib
import json
import math
import re
import sys
import types
from typing import Any

__all__ = ["STDLIB", "ProbeInputError", "Unencodable", "call", "decode", "encode", "resolve"]

#: Standard modules whose classes and functions may appear in an encoded value.
STDLIB = frozenset(
    {
        "builtins",
        "collections",
        "copyreg",
        "datetime",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "ipaddress",
        "json",
        "operator",
        "pathlib",
        "re",
        "string",
        "uuid",
        "_decimal",
        "_pydecimal",
        "_collections",
        "_operator",
        "_functools",
        "_datetime",
        "_pydatetime",
        "zoneinfo",
        "time",
        "xml.etree.ElementTree",
        "_elementtree",
        "array",
        "types",
        "argparse",
    }
)
_MAX_DEPTH = 24
_MAX_ITEMS = 2_000
_MAX_ITER = 200


#: Values encoded by name (``$ref``): classes and plain or built-in functions (an
#: instance whose ``__getattr__`` hands out a ``__qualname__`` is not one).
_NAMED = (
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
)


class Unencodable(ValueError):
    """A value with no faithful encoding (a lambda, a cycle, an object of a foreign module)."""


class ProbeInputError(Exception):
    """The probe could not rebuild a call's inputs in this process (never the function's
    own failure)."""


def _allowed(module: str, packages: frozenset[str]) -> bool:
    top = module.partition(".")[0]
    return module in STDLIB or top in packages


def resolve(ref: str, packages: frozenset[str]) -> Any:
    """The object named ``module:qualname``, from an allowed module only."""
    module_name, _, qualname = ref.partition(":")
    if not module_name or not qualname or not _allowed(module_name, packages):
        raise ProbeInputError(f"reference outside the allowed modules: {ref!r}")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _ref_of(value: Any, packages: frozenset[str]) -> str | None:
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    if not _allowed(module, packages):
        return None
    try:
        if resolve(f"{module}:{qualname}", packages) is value:
            return f"{module}:{qualname}"
    except Exception:  # noqa: BLE001 - not reachable by name: no reference
        return None
    return None


def _owners(module: Any) -> list[Any]:
    """The module's own functions and classes, and the functions of those classes."""
    name = getattr(module, "__name__", None)
    out: list[Any] = []
    for value in list(vars(module).values()):
        if getattr(value, "__module__", None) != name:
            continue
        if isinstance(value, types.FunctionType):
            out.append(value)
        elif isinstance(value, type):
            for member in list(vars(value).values()):
                member = getattr(member, "__func__", member)  # static and class methods
                if isinstance(member, types.FunctionType):
                    out.append(member)
    return out


def _default_of(value: Any, packages: frozenset[str]) -> list[Any] | None:
    """``[module:qualname, index or name]`` of a parameter default that is ``value``, in
    a nameable function of ``value``'s own module, else ``None``."""
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    if module is None or not _allowed(module.__name__, packages):
        return None
    for owner in _owners(module):
        found: int | str | None = None
        for index, default in enumerate(owner.__defaults__ or ()):
            if default is value:
                found = index
        for key, default in (owner.__kwdefaults__ or {}).items():
            if default is value:
                found = key
        if found is None:
            continue
        ref = _ref_of(owner, packages)
        if ref is not None:
            return [ref, found]
    return None


def _surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


#: The methods of a compiled pattern a match may have come from, tried in this order.
_MATCH_MODES = ("match", "search", "fullmatch")


def _key(encoded: Any) -> str:
    return json.dumps(encoded, sort_keys=True)


class _Encoder:
    def __init__(self, packages: frozenset[str], lenient: bool) -> None:
        self.packages = packages
        self.lenient = lenient
        self.items = 0
        self.active: set[int] = set()
        #: objects rebuilt by recipe, by id: a second sight (a back reference of a
        #: cycle, or sharing) is encoded as ``{"$back": n}``
        self.memo: dict[int, int] = {}
        self.keep: list[Any] = []

    def fail(self, value: Any, why: str) -> Any:
        if self.lenient:
            return {"$opaque": f"{type(value).__module__}.{type(value).__qualname__}"}
        raise Unencodable(why)

    def __call__(self, value: Any, depth: int = 0) -> Any:
        self.items += 1
        if self.items > _MAX_ITEMS or depth > _MAX_DEPTH:
            raise Unencodable("value too large or too deep")
        t = type(value)
        if t is str:
            if _surrogates(value):
                return {"$str": value.encode("utf-8", "surrogatepass").hex()}
            return value
        if value is None or t is bool or t is int:
            return value
        if t is float:
            if math.isfinite(value):
                return value
            return {"$float": repr(value)}
        if t is complex:
            return {"$complex": [self(value.real, depth + 1), self(value.imag, depth + 1)]}
        if t is bytes:
            return {"$bytes": value.hex()}
        if t is bytearray:
            return {"$bytearray": bytes(value).hex()}
        if t is memoryview:
            return self._memoryview(value)
        if id(value) in self.memo:
            return {"$back": self.memo[id(value)]}
        if id(value) in self.active:
            return self.fail(value, "a cycle")
        self.active.add(id(value))
        try:
            return self._container(value, t, depth)
        finally:
            self.active.discard(id(value))

    def _container(self, value: Any, t: type, depth: int) -> Any:
        if t is list:
            return [self(v, depth + 1) for v in value]
        if t is tuple:
            return {"$tuple": [self(v, depth + 1) for v in value]}
        if t is dict:
            return {"$dict": [[self(k, depth + 1), self(v, depth + 1)] for k, v in value.items()]}
        if t is set or t is frozenset:
            members = sorted((self(v, depth + 1) for v in value), key=_key)
            return {"$set" if t is set else "$frozenset": members}
        if t is types.ModuleType:
            if _allowed(value.__name__, self.packages):
                return {"$module": value.__name__}
            return self.fail(value, f"a module outside the allowed ones: {value.__name__}")
        if t is types.MethodType and not isinstance(value.__self__, type):
            return {"$bound": [self(value.__self__, depth + 1), value.__func__.__name__]}
        if isinstance(value, _NAMED):
            ref = _ref_of(value, self.packages)
            if ref is not None:
                return {"$ref": ref}
            default = _default_of(value, self.packages) if t is types.FunctionType else None
            if default is not None:
                return {"$default": default}
            owner = getattr(value, "__self__", None)
            if owner is not None and not isinstance(owner, (type, types.ModuleType)):
                # a built-in method bound to an object (a compiled pattern's match)
                return {"$bound": [self(owner, depth + 1), value.__name__]}
            return self.fail(value, f"no importable name for {value!r}"[:200])
        if t is re.Match:
            return self._match(value, depth)
        if self.lenient and (hasattr(value, "__next__") and hasattr(value, "__iter__")):
            out: list[Any] = []
            for item in value:
                if len(out) >= _MAX_ITER:
                    break
                out.append(self(item, depth + 1))
            return {"$iter": out}
        return self._reduce(value, t, depth)

    def _memoryview(self, value: memoryview) -> Any:
        # A view of bytes as binary protocols pass them (hyperframe's ``parse_body``):
        # its bytes and whether it is read-only; other shapes have no faithful encoding.
        try:
            shape = (value.ndim, value.format, value.c_contiguous)
        except ValueError:  # released
            return self.fail(value, "a released memoryview")
        if shape != (1, "B", True):
            return self.fail(value, "a memoryview that is not one-dimensional bytes")
        return {"$memoryview": [value.tobytes().hex(), value.readonly]}

    def _match(self, value: re.Match[Any], depth: int) -> Any:
        pattern, text, endpos = value.re, value.string, value.endpos
        # From the match's own ``pos`` first; a later match of ``finditer`` is found again
        # only from where it starts (its ``pos`` then differs: a match all the same).
        for pos in dict.fromkeys([value.pos, value.start()]):
            for mode in _MATCH_MODES:
                again = getattr(pattern, mode)(text, pos, endpos)
                if again is not None and again.regs == value.regs:
                    encoded = [self(pattern, depth + 1), self(text, depth + 1), pos, endpos, mode]
                    return {"$match": encoded}
        return self.fail(value, "a match that no match, search or fullmatch gives again")

    def _reduce(self, value: Any, t: type, depth: int) -> Any:
        if not _allowed(getattr(t, "__module__", "") or "", self.packages):
            return self.fail(value, f"type of a foreign module: {t.__module__}.{t.__qualname__}")
        try:
            reducer = copyreg.dispatch_table.get(t)  # pickle looks here first (re.Pattern)
            recipe = reducer(value) if reducer is not None else value.__reduce_ex__(4)
        except Exception as exc:  # noqa: BLE001 - not reducible: not encodable
            return self.fail(value, f"cannot reduce {t.__qualname__}: {type(exc).__name__}")
        if isinstance(recipe, str):  # a global by that name, as pickle saves it
            module = getattr(value, "__module__", None)
            try:
                if (
                    isinstance(module, str)
                    and resolve(f"{module}:{recipe}", self.packages) is value
                ):
                    return {"$ref": f"{module}:{recipe}"}
            except Exception:  # noqa: BLE001 - not reachable by that name
                pass
            return self.fail(value, "reduces to a name that does not reach it")
        if not isinstance(recipe, tuple) or len(recipe) < 2:
            return self.fail(value, "reduces to a name")
        func, args, *rest = recipe
        state, listitems, dictitems = (list(rest) + [None, None, None])[:3]
        if state is value and isinstance(value, dict):
            state = dict(value)  # a mapping whose state is itself (addict's Dict)
        ref = _ref_of(func, self.packages)
        if ref is None:
            return self.fail(value, f"reconstructor not nameable: {func!r}"[:200])
        # the order decoding follows: arguments, the object itself, its state, its items
        encoded_args = [self(a, depth + 1) for a in args]
        self.memo[id(value)] = len(self.memo)
        self.keep.append(value)  # ids stay unique while the encoding lasts
        encoded_state = self(state, depth + 1)
        lst = None if listitems is None else [self(v, depth + 1) for v in listitems]
        dct = None
        if dictitems is not None:
            dct = [[self(k, depth + 1), self(v, depth + 1)] for k, v in dictitems]
        return {"$reduce": [ref, encoded_args, encoded_state, lst, dct]}


def encode(
    value: Any, packages: frozenset[str] | set[str] = frozenset(), *, lenient: bool = False
) -> Any:
    """``value`` as tagged plain JSON (see the module doc). ``lenient``: what cannot be
    encoded becomes ``$opaque`` (outputs) instead of raising :class:`Unencodable` (inputs)."""
    try:
        return _Encoder(frozenset(packages), lenient)(value)
    except RecursionError as exc:
        raise Unencodable("too deep") from exc


def _set_state(obj: Any, state: Any) -> None:
    """Pickle's ``BUILD``: the class's ``__setstate__``, else the instance dict and slots
    (looked up on the type: an instance's ``__getattr__`` may answer anything)."""
    setstate = getattr(type(obj), "__setstate__", None)
    if setstate is not None:
        setstate(obj, state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        obj.__dict__.update(state)
    if slots:
        for name, item in slots.items():
            setattr(obj, name, item)


def decode(data: Any, packages: frozenset[str] | set[str] = frozenset()) -> Any:
    """The value :func:`encode` encoded (callables from the allowed modules only)."""
    allowed = frozenset(packages)
    memo: list[Any] = []

    def walk(node: Any, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH * 2:
            raise ProbeInputError("encoded value too deep")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [walk(v, depth + 1) for v in node]
        if not isinstance(node, dict) or len(node) != 1:
            raise ProbeInputError(f"not an encoded value: {str(node)[:100]}")
        ((tag, body),) = node.items()
        if tag == "$tuple":
            return tuple(walk(v, depth + 1) for v in body)
        if tag == "$dict":
            return {walk(k, depth + 1): walk(v, depth + 1) for k, v in body}
        if tag == "$set":
            return {walk(v, depth + 1) for v in body}
        if tag == "$frozenset":
            return frozenset(walk(v, depth + 1) for v in body)
        if tag == "$bytes":
            return bytes.fromhex(body)
        if tag == "$str":
            return bytes.fromhex(body).decode("utf-8", "surrogatepass")
        if tag == "$match":
            pattern, text, pos, endpos, mode = body
            compiled = walk(pattern, depth + 1)
            if not isinstance(compiled, re.Pattern) or mode not in _MATCH_MODES:
                raise ProbeInputError("not a match's pattern and method")
            match = getattr(compiled, mode)(walk(text, depth + 1), pos, endpos)
            if match is None:
                raise ProbeInputError("the match is not given again")
            return match
        if tag == "$default":
            ref, which = body
            owner = resolve(ref, allowed)
            owner = getattr(owner, "__func__", owner)
            if isinstance(which, int):
                return owner.__defaults__[which]
            return owner.__kwdefaults__[which]
        if tag == "$bytearray":
            return bytearray.fromhex(body)
        if tag == "$memoryview":
            data, readonly = body
            raw = bytes.fromhex(data)
            return memoryview(raw if readonly else bytearray(raw))
        if tag == "$float":
            return float(body)
        if tag == "$complex":
            return complex(walk(body[0]), walk(body[1]))
        if tag == "$ref":
            return resolve(body, allowed)
        if tag == "$bound":
            owner, name = body
            if not isinstance(name, str) or name.startswith("__"):
                raise ProbeInputError(f"not a method name: {name!r}")
            return getattr(walk(owner, depth + 1), name)
        if tag == "$module":
            if not isinstance(body, str) or not _allowed(body, allowed):
                raise ProbeInputError(f"module outside the allowed modules: {body!r}")
            return importlib.import_module(body)
        if tag == "$back":
            return memo[body]
        if tag == "$reduce":
            ref, args, state, listitems, dictitems = body
            obj = resolve(ref, allowed)(*walk(args, depth + 1))
            memo.append(obj)
            if state is not None:
                _set_state(obj, walk(state, depth + 1))
            for item in walk(listitems, depth + 1) or ():
                obj.append(item)
            for key, item in walk(dictitems, depth + 1) or ():
                obj[key] = item
            return obj
        raise ProbeInputError(f"unknown tag {tag!r}")

    try:
        return walk(data)
    except ProbeInputError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure to rebuild is the probe's
        raise ProbeInputError(f"{type(exc).__name__}: {exc}"[:300]) from None


def _private(name: str, owner: Any) -> str:
    if name.startswith("__") and not name.endswith("__"):
        return f"_{owner.__name__.lstrip('_')}{name}"
    return name


def call(
    module: str,
    qualname: str,
    kind: str,
    receiver: Any,
    args: list[Any],
    kwargs: list[Any],
    packages: list[str],
) -> dict[str, Any]:
    """Run one recorded call of ``module:qualname`` and return its encoded outcome.

    ``kind``: ``function`` (the module attribute), ``method`` (``receiver`` is the
    encoded instance), ``classmethod``/``staticmethod`` (called on the class),
    ``getter``/``setter`` (a property: read, or set to the one argument)."""
    allowed = frozenset(packages)
    try:
        owner_name, _, name = qualname.rpartition(".")
        mod = importlib.import_module(module)
        owner: Any = mod
        for part in owner_name.split(".") if owner_name else ():
            owner = getattr(owner, part)
        pos = decode(args, allowed)
        named = {str(k): v for k, v in decode(kwargs, allowed)}
        target: Any = None
        if kind == "function":
            target = getattr(owner, name)
        elif kind in ("classmethod", "staticmethod"):
            target = getattr(owner, _private(name, owner))
        else:
            target = decode(receiver, allowed)
            if not isinstance(target, owner):
                raise ProbeInputError(f"receiver is not a {owner.__qualname__}")
    except ProbeInputError:
        raise
    except Exception as exc:  # noqa: BLE001 - the inputs could not be rebuilt
        raise ProbeInputError(f"{type(exc).__name__}: {exc}"[:300]) from None
    attr = _private(name, owner) if owner is not mod else name
    if kind in ("function", "classmethod", "staticmethod"):
        result = target(*pos, **named)
    elif kind == "getter":
        result = getattr(target, attr)
    elif kind == "setter":
        setattr(target, attr, *pos)
        result = None
    else:
        result = getattr(target, attr)(*pos, **named)
    out = {"r": encode(result, allowed, lenient=True)}
    if kind in ("method", "getter", "setter"):
        out["self"] = encode(target, allowed, lenient=True)
    if pos or named:
        out["args"] = encode([pos, named], allowed, lenient=True)
    return out
