import asyncio


class EventManager:
    def __init__(self):
        self._listeners = {}
        self._tasks = set()

    def on(self, event, listener):
        self._listeners.setdefault(event, []).append(listener)

    def emit(self, event, data):
        for listener in self._listeners.get(event, []):
            task = asyncio.ensure_future(asyncio.to_thread(listener, data))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def wait_for_all_listeners_to_complete(self, timeout=None):
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
