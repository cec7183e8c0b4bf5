import asyncio

from zeroconf.asyncio import AsyncServiceBrowser


def test_browser_started():
    async def main():
        browser = AsyncServiceBrowser()
        browser.async_start()
        await asyncio.wait_for(browser.ready.wait(), 1.0)
        assert browser.services == ["_http._tcp.local."]
        await browser.async_cancel()

    asyncio.run(main())
