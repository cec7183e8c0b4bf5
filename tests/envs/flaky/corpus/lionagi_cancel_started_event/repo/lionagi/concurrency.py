import asyncio
import random


async def outer_task(started, state):
    await asyncio.sleep(random.uniform(0.0, 0.02))  # set-up before the guarded region
    started.set()
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        state["inner_cancelled"] = True
        raise
