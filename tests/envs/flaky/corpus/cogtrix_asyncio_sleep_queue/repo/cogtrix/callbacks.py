import random
import threading
import time


class WebSocketCallbackHandler:
    """Forwards tokens produced on a worker thread to an asyncio queue."""

    def __init__(self, loop, queue):
        self.loop = loop
        self.queue = queue

    def on_llm_new_token(self, token):
        def work():
            time.sleep(random.uniform(0.0, 0.1))  # the model backend's latency
            self.loop.call_soon_threadsafe(self.queue.put_nowait, token)

        threading.Thread(target=work, daemon=True).start()
