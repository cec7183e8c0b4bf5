import asyncio

from zeroconf.asyncio import AsyncServiceBrowser


def test_browser_started():
    async def main():
        browser = AsyncServiceBrowser()
        browser.async_start()
        await asyncio.sleep(0.002)
        assert browser.services == ["_http._tcp.local."]
        await browser.async_cancel()

    asyncio.run(main())
