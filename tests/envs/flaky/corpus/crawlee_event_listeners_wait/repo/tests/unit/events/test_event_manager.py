import asyncio
import random
import time

from crawlee.events import EventManager


def test_emit_invokes_sync_listener():
    calls = []

    def listener(data):
        time.sleep(random.uniform(0.0, 0.2))  # a listener doing blocking work
        calls.append(data)

    async def scenario():
        event_manager = EventManager()
        event_manager.on("persist_state", listener)
        event_manager.emit("persist_state", "payload")
        await asyncio.sleep(0.1)
        assert calls == ["payload"]

    asyncio.run(scenario())
