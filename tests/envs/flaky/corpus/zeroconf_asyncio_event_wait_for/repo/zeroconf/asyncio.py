import asyncio
import random


class AsyncServiceBrowser:
    """Browses for services; ``ready`` is set once the first answers arrived."""

    def __init__(self):
        self.ready = asyncio.Event()
        self.services = []
        self._task = None

    async def _query(self):
        await asyncio.sleep(random.uniform(0.0, 0.004))  # the multicast round trip
        self.services.append("_http._tcp.local.")
        self.ready.set()

    def async_start(self):
        self._task = asyncio.get_running_loop().create_task(self._query())

    async def async_cancel(self):
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
