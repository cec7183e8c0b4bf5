import asyncio

from klangk.chat import Chat


def test_follow_up_reply():
    async def scenario():
        chat = Chat()
        chat.follow_up("hi")
        await asyncio.sleep(0.1)
        assert chat.replies == ["echo: hi"]

    asyncio.run(scenario())
