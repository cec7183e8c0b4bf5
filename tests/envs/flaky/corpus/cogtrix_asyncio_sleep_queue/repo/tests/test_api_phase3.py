import asyncio

from cogtrix.callbacks import WebSocketCallbackHandler


def test_callback_handler_delivers_token():
    async def scenario():
        queue = asyncio.Queue()
        handler = WebSocketCallbackHandler(asyncio.get_running_loop(), queue)
        handler.on_llm_new_token("token")
        await asyncio.sleep(0.05)
        item = queue.get_nowait()
        assert item == "token"

    asyncio.run(scenario())
