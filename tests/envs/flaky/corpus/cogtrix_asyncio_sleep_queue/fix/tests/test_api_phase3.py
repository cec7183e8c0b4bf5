import asyncio

from cogtrix.callbacks import WebSocketCallbackHandler


def test_callback_handler_delivers_token():
    async def scenario():
        queue = asyncio.Queue()
        handler = WebSocketCallbackHandler(asyncio.get_running_loop(), queue)
        handler.on_llm_new_token("token")
        item = await asyncio.wait_for(queue.get(), timeout=2.0)
        assert item == "token"

    asyncio.run(scenario())
