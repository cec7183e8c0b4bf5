import asyncio
import random


class Chat:
    def __init__(self):
        self.replies = []
        self.agent_task = None

    async def _run_agent(self, message):
        await asyncio.sleep(random.uniform(0.0, 0.2))  # the model call
        self.replies.append(f"echo: {message}")

    def follow_up(self, message):
        self.agent_task = asyncio.ensure_future(self._run_agent(message))
