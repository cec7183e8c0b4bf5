import asyncio

from klangk.chat import Chat


async def _await_agent_run(chat):
    if chat.agent_task is not None:
        await chat.agent_task


def test_follow_up_reply():
    async def scenario():
        chat = Chat()
        chat.follow_up("hi")
        await _await_agent_run(chat)
        assert chat.replies == ["echo: hi"]

    asyncio.run(scenario())
