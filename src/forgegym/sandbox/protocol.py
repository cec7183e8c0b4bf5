"""The sandbox's wire protocol: what the trusted parent and the child exchange.

* frames between the parent and a zygote (:func:`send_frame` / :func:`recv_frame`:
  length-prefixed JSON, with file descriptors passed alongside);
* the child's report stream and how the parent reads it (:func:`read_report`: the key
  line, then lines each carrying an HMAC of ``<seq>:<json>``; see
  :mod:`forgegym.sandbox.harness` for the writer and the forgery model);
* which failed runs were refusals of the runtime policy or forgery (:func:`refused`);
* strict plain values (:func:`strict_plain`): what a call job may return (exact JSON
  builtins only, so always-equal objects never reach the parent's comparison).

Standard library only: the child imports it too (through the harness).
"""

from __future__ import annotations

import hmac
import json
import socket
import struct
from typing import Any

from forgegym.sandbox import policy

__all__ = [
    "StrictValueError",
    "read_report",
    "recv_frame",
    "refused",
    "send_frame",
    "strict_plain",
]

_hmac_new = hmac.new
_hmac_compare = hmac.compare_digest
_HEADER = struct.Struct("!Q")
_MAX_DEPTH = 200


def send_frame(sock: socket.socket, obj: Any, fds: list[int] | None = None) -> None:
    """Length-prefixed JSON frame; ``fds`` ride along with the header (SCM_RIGHTS)."""
    data = json.dumps(obj).encode()
    header = _HEADER.pack(len(data))
    if fds:
        socket.send_fds(sock, [header], fds)
    else:
        sock.sendall(header)
    sock.sendall(data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("peer closed")
        buf += chunk
    return bytes(buf)


def recv_frame(sock: socket.socket, max_fds: int = 0) -> tuple[Any, list[int]]:
    """Receive one frame (and any fds sent with it). Raises EOFError when closed."""
    fds: list[int] = []
    if max_fds:
        header, fds, _flags, _addr = socket.recv_fds(sock, _HEADER.size, max_fds)
        if not header:
            raise EOFError("peer closed")
        if len(header) < _HEADER.size:
            header += _recv_exact(sock, _HEADER.size - len(header))
    else:
        header = _recv_exact(sock, _HEADER.size)
    (n,) = _HEADER.unpack(header)
    return json.loads(_recv_exact(sock, n)), fds


# ============================================================================ strict values


class StrictValueError(TypeError):
    """A return value that is not made of exact JSON builtins."""


def strict_plain(value: Any, _depth: int = 0) -> Any:
    """Convert to JSON-plain data accepting only *exact* builtin types (``type(x) is int``):
    None, bool, int, float, str, list, tuple (-> list), dict with str keys. Subclasses (an
    ``int`` with a custom ``__eq__``) and arbitrary objects (always-equal) are rejected."""
    if _depth > _MAX_DEPTH:
        raise StrictValueError("value nested too deeply")
    t = type(value)
    if value is None or t is bool or t is int or t is str or t is float:
        return value  # NaN/inf are written as JSON NaN/Infinity, which json.loads reads back
    if t is list or t is tuple:
        return [strict_plain(v, _depth + 1) for v in value]
    if t is dict:
        out: dict[str, Any] = {}
        for k, v in value.items():
            if type(k) is not str:
                raise StrictValueError(f"dict key of type {type(k).__name__!s}, expected str")
            out[k] = strict_plain(v, _depth + 1)
        return out
    raise StrictValueError(f"unsupported return type {t.__module__}.{t.__qualname__}")


#: Details of results whose child was caught attempting to forge or to escape the policy.
_REFUSALS = (
    f"worker exited with code {policy.VIOLATION_EXIT}",
    "trusted state tampered with",
    "unauthenticated report line",
    "report does not start with its key",
)


def refused(detail: str) -> str | None:
    """The refusal a run's ``detail`` reports (the runtime policy ended the worker, the
    trusted state was tampered with, or a report line was forged), else ``None``."""
    for marker in _REFUSALS:
        if detail.startswith(marker):
            return detail[:300]
    return None


def read_report(data: bytes) -> tuple[list[dict[str, Any]], str | None]:
    """The parent's reading of a report stream: the key line, then lines each carrying
    an HMAC of ``<seq>:<json>`` under that key. Returns the decoded lines and, if the
    stream is not exactly that (a forged, reordered, dropped or unsigned line, a tamper
    record), the reason; the lines before the first bad one are returned."""
    lines: list[dict[str, Any]] = []
    parts = data.split(b"\n")
    if parts and parts[-1] != b"":
        return lines, "report ends with an incomplete line"
    parts = parts[:-1]
    if not parts:
        return lines, None
    try:
        head = json.loads(parts[0])
        key = bytes.fromhex(head["k"]) if head.get("t") == "key" else b""
    except (ValueError, TypeError, KeyError, AttributeError):
        key = b""
    if len(key) != 32:
        return lines, "report does not start with its key"
    for seq, part in enumerate(parts[1:]):
        body, _, tag = part.rpartition(b" ")
        expected = _hmac_new(key, b"%d:" % seq + body, digestmod="sha256").hexdigest()
        if not _hmac_compare(expected.encode(), tag):
            return lines, "unauthenticated report line (forged or out of order)"
        try:
            obj = json.loads(body)
        except (ValueError, RecursionError):  # nesting past the limit is the child's too
            return lines, "malformed report line"
        if not isinstance(obj, dict):
            return lines, "malformed report line"
        if obj.get("t") == "tamper":
            return lines, f"trusted state tampered with: {str(obj.get('what'))[:300]}"
        lines.append(obj)
    return lines, None
