import asyncio

import litellm.main as litellm


class MetadataCaptureCallback:
    def __init__(self):
        self.metadata = None

    async def async_log_success_event(self, kwargs, response):
        self.metadata = kwargs["litellm_metadata"]


def test_metadata_passed_via_litellm_metadata():
    async def main():
        callback = MetadataCaptureCallback()
        litellm.callbacks[:] = [callback]
        await litellm.acompletion(
            "gpt-x", [{"role": "user", "content": "hi"}], litellm_metadata={"team": "search"}
        )
        await asyncio.sleep(0.0015)
        assert callback.metadata == {"team": "search"}

    asyncio.run(main())
