import asyncio
import random

callbacks = []


async def _log_success(kwargs, response):
    await asyncio.sleep(random.uniform(0.0, 0.003))  # the logging worker's queue
    for callback in list(callbacks):
        await callback.async_log_success_event(kwargs, response)


async def acompletion(model, messages, litellm_metadata=None):
    """A completion; success callbacks are dispatched in the background."""
    response = {"model": model, "content": messages[-1]["content"].upper()}
    kwargs = {"litellm_metadata": litellm_metadata or {}}
    asyncio.get_running_loop().create_task(_log_success(kwargs, response))
    return response
