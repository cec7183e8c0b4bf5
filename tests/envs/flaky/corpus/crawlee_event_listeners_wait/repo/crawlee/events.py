import asyncio
import random
import time


class EventManager:
    def __init__(self):
        self._listeners = {}
        self._tasks = set()

    def on(self, *, event, listener):
        self._listeners.setdefault(event, []).append(listener)

    @staticmethod
    def _invoke(listener, event_data):
        # Stands for asyncio.to_thread() start-up under CI load (parallel xdist workers).
        time.sleep(random.uniform(0.0, 0.2))
        listener(event_data)

    def emit(self, *, event, event_data):
        for listener in self._listeners.get(event, []):
            task = asyncio.ensure_future(asyncio.to_thread(self._invoke, listener, event_data))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def wait_for_all_listeners_to_complete(self, *, timeout=None):
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
