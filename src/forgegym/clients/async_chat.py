"""One asynchronous OpenAI-compatible chat client: concurrency, retries, cache, accounting.

:class:`AsyncChatClient` sends OpenAI-style ``messages`` to any chat-completions
endpoint (vLLM, llama.cpp's server, SGLang, hosted APIs) through the ``openai``
package's ``AsyncOpenAI`` (the ``llm`` extra):

* at most ``concurrency`` requests in flight (an ``asyncio.Semaphore``);
* retries with exponential backoff and jitter on rate limits (429, honouring the
  server's ``Retry-After``), timeouts, dropped connections and 5xx answers; any other
  error (400, 401, 404, ...) is a :class:`ChatError` at once. The SDK's own retries are
  off so that every retry is counted here;
* a completion cache on disk (:class:`CompletionCache`, SQLite) keyed by the model,
  the messages, the sampling parameters and a *sample index*: run ``r`` of a task asks
  for sample ``r``, so R runs are R independent samples and a rerun of the same
  evaluation is served from the cache without a request;
* token and time accounting (:class:`Usage`).

:class:`forgegym.clients.chat.ChatClient` is its synchronous face (the ``llm`` policy and
Oversight's LLM worker): the same client, run on a private event loop thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "AsyncChatClient",
    "ChatError",
    "Completion",
    "CompletionCache",
    "Usage",
    "cache_key",
]

#: HTTP statuses worth retrying: timeouts, conflicts, rate limits, server errors.
_RETRY_STATUSES = frozenset({408, 409, 429})


class ChatError(RuntimeError):
    """The endpoint could not be reached, or answered with an error or oddly."""


@dataclass
class Usage:
    """What a client spent: requests, retries, cache hits, tokens and time."""

    requests: int = 0  # HTTP requests sent, retries included
    completions: int = 0  # completions returned (from the endpoint or the cache)
    cache_hits: int = 0
    retries: int = 0
    rate_limited: int = 0  # 429 answers
    failures: int = 0  # completions given up on (ChatError raised)
    truncated: int = 0  # replies cut at max_tokens (finish_reason "length")
    prompt_tokens: int = 0  # as the endpoint reported them (cache hits: recorded ones)
    completion_tokens: int = 0
    request_seconds: float = 0.0  # summed wall time of requests (overlapping ones add up)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Completion:
    """One reply: its text, its tokens, and whether the cache served it."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    cached: bool = False
    seconds: float = 0.0


def cache_key(
    model: str, messages: Sequence[Mapping[str, Any]], sampling: Mapping[str, Any], sample: int
) -> str:
    """The cache key of a request: a SHA-256 of its canonical JSON.

    The endpoint's URL is not part of it: the same model behind another server gives
    the same answers (and a local mirror of a hosted model is a cache hit).
    """
    payload = {
        "model": model,
        "messages": [dict(m) for m in messages],
        "sampling": dict(sampling),
        "sample": sample,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class CompletionCache:
    """Completions on disk in one SQLite file (safe across threads and processes).

    Args:
        path: the database file (created with its folders).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise ValueError(f"path: {self.path} is a directory; give a file for the cache")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS completions (key TEXT PRIMARY KEY, text TEXT NOT "
                "NULL, prompt_tokens INTEGER, completion_tokens INTEGER, finish_reason TEXT, "
                "created REAL)"
            )
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"path: {self.path} is not a completion cache ({exc})") from None

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens, finish_reason FROM completions "
                "WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return Completion(
            text=row[0],
            prompt_tokens=int(row[1] or 0),
            completion_tokens=int(row[2] or 0),
            finish_reason=row[3],
            cached=True,
        )

    def put(self, key: str, completion: Completion) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO completions VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    completion.text,
                    completion.prompt_tokens,
                    completion.completion_tokens,
                    completion.finish_reason,
                    time.time(),
                ),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked to wait (``Retry-After`` / ``retry-after-ms``)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue  # an HTTP date: fall back to the backoff
        if seconds >= 0:
            return seconds
    return None


@dataclass
class AsyncChatClient:
    """An asynchronous chat-completions client on ``openai.AsyncOpenAI``.

    Args:
        model: the model to query.
        base_url: the endpoint (``http://host:port/v1``).
        api_key: the bearer token (``"EMPTY"`` when the server needs none, as vLLM's).
        temperature, max_tokens: sampling (``None``: left to the server).
        extra: further request fields (``top_p``, ``stop``, ``seed``, ...).
        concurrency: requests in flight at most.
        max_retries: retries of one completion after the first attempt.
        backoff_s, max_backoff_s: the first retry waits about ``backoff_s``, doubling
            each time up to ``max_backoff_s`` (jittered by up to half); a 429's
            ``Retry-After`` is honoured when longer (up to ``max_backoff_s``).
        timeout_s: per-request timeout.
        cache: a :class:`CompletionCache`, a path for one, or ``None`` (no cache).
        sdk: an ``openai.AsyncOpenAI``-like client to use instead of building one.

    One client belongs to one event loop (the SDK's HTTP pool does).
    """

    model: str
    base_url: str = ""
    api_key: str = "EMPTY"
    temperature: float | None = 0.0
    max_tokens: int | None = 2048
    extra: Mapping[str, Any] = field(default_factory=dict)
    concurrency: int = 8
    max_retries: int = 6
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    timeout_s: float = 120.0
    cache: CompletionCache | str | Path | None = None
    sdk: Any = None
    usage: Usage = field(default_factory=Usage)
    _owns_sdk: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise ValueError("model: the model to query is required")
        if self.sdk is None and not self.base_url:
            raise ValueError("base_url: an OpenAI-compatible endpoint is required")
        if isinstance(self.concurrency, bool) or not isinstance(self.concurrency, int):
            raise ValueError(f"concurrency: expected an integer >= 1, got {self.concurrency!r}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency: expected an integer >= 1, got {self.concurrency!r}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries: expected >= 0, got {self.max_retries!r}")
        if self.temperature is not None and not 0.0 <= self.temperature <= 2.0:
            raise ValueError(f"temperature: expected a number in [0, 2], got {self.temperature!r}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens: expected >= 1, got {self.max_tokens!r}")
        self.base_url = self.base_url.rstrip("/")
        self.api_key = self.api_key or "EMPTY"
        if isinstance(self.cache, (str, Path)):
            self.cache = CompletionCache(self.cache)
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()  # usage counters: the sync face may share them

    # ---------------------------------------------------------------- internals
    @property
    def sampling(self) -> dict[str, Any]:
        """The request's sampling fields (what the cache key holds)."""
        params: dict[str, Any] = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        return {**params, **self.extra}

    def _bind(self) -> tuple[Any, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._semaphore is None:
            if self._loop is not None and self.sdk is not None and self._owns_sdk:
                self.sdk = None  # its HTTP pool belongs to the old loop
            self._loop = loop
            self._semaphore = asyncio.Semaphore(self.concurrency)
        if self.sdk is None:
            try:
                from openai import AsyncOpenAI
            except ImportError:
                raise ChatError(
                    "the openai package is not installed: pip install 'forgegym[llm]'"
                ) from None
            self.sdk = AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key,
                max_retries=0,  # retried (and counted) here
                timeout=self.timeout_s,
            )
            self._owns_sdk = True
        return self.sdk, self._semaphore

    def _count(self, **deltas: float) -> None:
        with self._lock:
            for name, delta in deltas.items():
                setattr(self.usage, name, getattr(self.usage, name) + delta)

    def _backoff(self, attempt: int, exc: BaseException) -> float:
        delay = min(self.max_backoff_s, self.backoff_s * 2.0**attempt)
        delay *= 0.5 + random.random() / 2.0  # noqa: S311 - jitter, not cryptography
        asked = _retry_after(exc)
        if asked is not None:
            delay = max(delay, min(asked, self.max_backoff_s))
        return delay

    def _retryable(self, exc: BaseException) -> bool:
        import openai

        if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
            return True
        status = _status_of(exc)
        return status is not None and (status in _RETRY_STATUSES or status >= 500)

    async def _request(self, messages: list[dict[str, Any]]) -> Completion:
        import openai

        sdk, semaphore = self._bind()
        attempt = 0
        while True:
            async with semaphore:
                started = time.perf_counter()
                try:
                    response = await sdk.chat.completions.create(
                        model=self.model, messages=messages, **self.sampling
                    )
                except openai.OpenAIError as exc:
                    error: BaseException | None = exc
                else:
                    error = None
                finally:
                    self._count(requests=1, request_seconds=time.perf_counter() - started)
            if error is None:
                return self._parse(response)
            if _status_of(error) == 429:
                self._count(rate_limited=1)
            if not self._retryable(error) or attempt >= self.max_retries:
                status = _status_of(error)
                what = f"HTTP {status}" if status is not None else type(error).__name__
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise ChatError(
                    f"LLM endpoint {self.base_url or 'sdk'} failed{tries} ({what}): {error}"
                ) from error
            self._count(retries=1)
            await asyncio.sleep(self._backoff(attempt, error))
            attempt += 1

    def _parse(self, response: Any) -> Completion:
        choices = getattr(response, "choices", None)
        try:
            choice = choices[0]  # type: ignore[index]
            text = choice.message.content
        except (TypeError, IndexError, KeyError, AttributeError):
            raise ChatError(
                f"unexpected response from {self.base_url or 'sdk'}: {response!r:.300}"
            ) from None
        if text is not None and not isinstance(text, str):
            raise ChatError(f"unexpected response from {self.base_url or 'sdk'}: {text!r:.300}")
        usage = getattr(response, "usage", None)
        return Completion(
            text=text or "",
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            finish_reason=getattr(choice, "finish_reason", None),
        )

    # ---------------------------------------------------------------- public
    async def complete(
        self, messages: Sequence[Mapping[str, Any]], *, sample: int = 0
    ) -> Completion:
        """The reply to ``messages``: from the cache when it holds this request's
        ``sample``, else from the endpoint (then cached).

        Raises:
            ChatError: the endpoint failed after the retries, or answered oddly.
        """
        chat = [dict(m) for m in messages]
        cache = self.cache if isinstance(self.cache, CompletionCache) else None
        key = cache_key(self.model, chat, self.sampling, sample) if cache is not None else ""
        if cache is not None:
            hit = cache.get(key)
            if hit is not None:
                self._count(
                    completions=1,
                    cache_hits=1,
                    prompt_tokens=hit.prompt_tokens,
                    completion_tokens=hit.completion_tokens,
                )
                return hit
        started = time.perf_counter()
        try:
            completion = await self._request(chat)
        except ChatError:
            self._count(failures=1)
            raise
        completion = Completion(
            text=completion.text,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            finish_reason=completion.finish_reason,
            seconds=time.perf_counter() - started,
        )
        self._count(
            completions=1,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            truncated=int(completion.finish_reason == "length"),
        )
        if cache is not None:
            cache.put(key, completion)
        return completion

    async def aclose(self) -> None:
        """Close the HTTP pool this client opened (not a given ``sdk``)."""
        if self.sdk is not None and self._owns_sdk:
            await self.sdk.close()
            self.sdk = None
            self._owns_sdk = False
