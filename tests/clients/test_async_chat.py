"""The async client against the scripted fake server: concurrency limit, 429 handling,
timeouts, errors that are not retried, and the completion cache."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytest.importorskip("fastapi")

from forgegym.clients.async_chat import AsyncChatClient, ChatError, CompletionCache  # noqa: E402
from forgegym.clients.chat import ChatClient  # noqa: E402
from forgegym.play.fake_openai import (  # noqa: E402
    FakeOpenAIServer,
    TaskScript,
    create_app,
    prompt_key,
)

PROMPT = "the first observation of a task"
TASKS = {prompt_key(PROMPT): TaskScript(env_id="Forge/X-v0", task_id="x/1", reference="REF")}


def _chat(text: str = PROMPT) -> list[dict[str, str]]:
    return [{"role": "system", "content": "be good"}, {"role": "user", "content": text}]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAIServer]:
    app = create_app(TASKS, latency_s=0.2, slow_s=5.0, rate_limit_failures=2)
    with FakeOpenAIServer(app) as server:
        yield server


def _run(client: AsyncChatClient, coroutine_fn: object) -> object:
    async def main() -> object:
        try:
            return await coroutine_fn()  # type: ignore[operator]
        finally:
            await client.aclose()

    return asyncio.run(main())


def test_requests_in_flight_never_exceed_the_concurrency_limit(fake: FakeOpenAIServer) -> None:
    fake.app.state.max_in_flight = 0
    client = AsyncChatClient(model="fake-ref", base_url=fake.url, concurrency=3)

    async def many() -> list[str]:
        replies = await asyncio.gather(*(client.complete(_chat(), sample=i) for i in range(9)))
        return [r.text for r in replies]

    assert _run(client, many) == ["REF"] * 9
    assert fake.app.state.max_in_flight == 3  # all 9 queued at once; 3 answered at a time
    assert client.usage.requests == 9 and client.usage.completions == 9
    assert client.usage.prompt_tokens == 9 * len(f"be good {PROMPT}".split())
    assert client.usage.completion_tokens == 9


def test_rate_limits_are_retried_and_counted(fake: FakeOpenAIServer) -> None:
    client = AsyncChatClient(model="fake-429", base_url=fake.url, backoff_s=0.01)

    async def one() -> str:
        return (await client.complete(_chat("unique 429 prompt " + PROMPT), sample=0)).text

    # The 429 script needs an indexed prompt: this one is not, so after the two 429s
    # the fake answers 400, which is not retried.
    with pytest.raises(ChatError, match="HTTP 400"):
        _run(client, one)
    assert client.usage.rate_limited == 2 and client.usage.retries == 2
    assert client.usage.requests == 3 and client.usage.failures == 1

    client = AsyncChatClient(model="fake-429", base_url=fake.url, backoff_s=0.01)

    async def indexed() -> str:
        return (await client.complete(_chat(), sample=5)).text

    assert _run(client, indexed) == "REF"
    assert (client.usage.rate_limited, client.usage.retries, client.usage.requests) == (2, 2, 3)

    # The fake rate-limits each distinct request body: another temperature is another.
    stingy = AsyncChatClient(
        model="fake-429", base_url=fake.url, backoff_s=0.01, max_retries=1, temperature=0.9
    )

    async def give_up() -> str:
        return (await stingy.complete(_chat(), sample=6)).text

    with pytest.raises(ChatError, match=r"after 2 attempts \(HTTP 429\)"):
        _run(stingy, give_up)


def test_timeouts_are_retried_then_an_error(fake: FakeOpenAIServer) -> None:
    client = AsyncChatClient(
        model="fake-slow", base_url=fake.url, timeout_s=0.3, max_retries=1, backoff_s=0.01
    )

    async def slow() -> str:
        return (await client.complete(_chat())).text

    with pytest.raises(ChatError, match="APITimeoutError"):
        _run(client, slow)
    assert client.usage.requests == 2 and client.usage.retries == 1


def test_client_errors_are_not_retried(fake: FakeOpenAIServer) -> None:
    for model, pattern in (("no-such-model", "HTTP 404"), ("fake-ref", "no indexed task")):
        client = AsyncChatClient(model=model, base_url=fake.url, backoff_s=0.01)

        async def one(c: AsyncChatClient = client) -> str:
            return (await c.complete(_chat("an unknown prompt"))).text

        with pytest.raises(ChatError, match=pattern):
            _run(client, one)
        assert client.usage.requests == 1 and client.usage.retries == 0
    for kwargs, name in (
        ({"model": ""}, "model"),
        ({"model": "m", "base_url": ""}, "base_url"),
        ({"model": "m", "concurrency": 0}, "concurrency"),
        ({"model": "m", "temperature": 3.0}, "temperature"),
    ):
        with pytest.raises(ValueError, match=name):
            AsyncChatClient(**{"base_url": fake.url, **kwargs})  # type: ignore[arg-type]


def test_the_cache_answers_a_rerun_and_keys_on_sample_and_sampling(
    fake: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "cache" / "completions.sqlite"

    def client(**kwargs: object) -> AsyncChatClient:
        return AsyncChatClient(model="fake-ref", base_url=fake.url, cache=path, **kwargs)  # type: ignore[arg-type]

    first = client()

    async def three() -> list[bool]:
        replies = [
            await first.complete(_chat(), sample=0),
            await first.complete(_chat(), sample=0),
            await first.complete(_chat(), sample=1),
        ]
        return [r.cached for r in replies]

    assert _run(first, three) == [False, True, False]
    assert first.usage.requests == 2 and first.usage.cache_hits == 1

    rerun = client()

    async def again() -> list[bool]:
        return [(await rerun.complete(_chat(), sample=s)).cached for s in (0, 1)]

    assert _run(rerun, again) == [True, True] and rerun.usage.requests == 0
    assert rerun.usage.completion_tokens == 2  # the recorded tokens are accounted

    hotter = client(temperature=0.7)

    async def different() -> bool:
        return (await hotter.complete(_chat(), sample=0)).cached

    assert _run(hotter, different) is False and hotter.usage.requests == 1
    assert len(CompletionCache(path)) == 3
    (tmp_path / "dir").mkdir()
    with pytest.raises(ValueError, match="directory"):
        CompletionCache(tmp_path / "dir")
    (tmp_path / "junk").write_bytes(b"not a database" * 100)
    with pytest.raises(ValueError, match="not a completion cache"):
        CompletionCache(tmp_path / "junk")


def test_the_sync_client_is_the_same_client(fake: FakeOpenAIServer, tmp_path: Path) -> None:
    chat = ChatClient(
        model="fake-429", base_url=fake.url, cache=tmp_path / "c.sqlite", temperature=1.5
    )
    chat._async()[0].backoff_s = 0.01
    assert chat.complete(_chat()) == "REF"
    assert chat.usage.rate_limited == 2 and chat.usage.requests == 3
    assert chat.complete(_chat()) == "REF" and chat.usage.cache_hits == 1
