import asyncio

from lionagi.concurrency import outer_task


def test_taskgroup_cancel_scope_propagation():
    async def scenario():
        state = {"inner_cancelled": False}
        started = asyncio.Event()
        task = asyncio.ensure_future(outer_task(started, state))
        await asyncio.sleep(0.01)  # race: outer may not have started yet
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return state["inner_cancelled"]

    inner_cancelled = asyncio.run(scenario())
    assert inner_cancelled
