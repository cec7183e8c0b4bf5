"""Model clients: the one OpenAI-compatible chat client.

* :mod:`~forgegym.clients.async_chat`: :class:`AsyncChatClient` (concurrency, retries,
  rate limits, completion cache, accounting), what ``forgegym eval --model`` uses;
* :mod:`~forgegym.clients.chat`: :class:`ChatClient`, its synchronous face, behind the
  ``llm`` policy, the batch ``openai_policy`` and Oversight's ``LLMWorker``.

Layer: below ``policies`` and ``envs`` (both ask models); it imports nothing of forgegym.
Import-light: the ``openai`` package loads when a client is built.
"""
