import asyncio
from unittest.mock import MagicMock

from crawlee.events import EventManager

SYSTEM_INFO = "systemInfo"


def test_emit_invokes_registered_sync_listener():
    async def scenario():
        event_manager = EventManager()
        event_system_info_data = {"cpu_info": {"used_ratio": 0.5}}
        sync_listener = MagicMock()

        event_manager.on(event=SYSTEM_INFO, listener=sync_listener)
        event_manager.emit(event=SYSTEM_INFO, event_data=event_system_info_data)

        await event_manager.wait_for_all_listeners_to_complete()

        assert sync_listener.call_count == 1
        assert sync_listener.call_args[0] == (event_system_info_data,)

    asyncio.run(scenario())
