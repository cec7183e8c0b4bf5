"""The dashboard's Curriculum tab on a server without ``--curriculum`` says so (one
request, a notice, not an error), and with one shows counts as integers."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

import forgegym  # noqa: F401
from tests.server.conftest import SERVED_ENV, live_server

playwright = pytest.importorskip("playwright.sync_api")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium)"),
    pytest.mark.slow,
]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
        )
        try:
            page = context.new_page()
            page.set_default_timeout(90_000)
            yield page
        finally:
            context.close()


def _open_curriculum(page: Any, url: str) -> list[str]:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(url + "/")
    page.wait_for_function(f"document.querySelector('#env-id').textContent === {SERVED_ENV!r}")
    page.click(".tab[data-tab='curriculum']")
    page.wait_for_function("document.querySelector('#curriculum-message').textContent !== ''")
    return [r for r in requests if "/curriculum/" in r]


def test_without_a_curriculum_the_tab_says_how_to_get_one(page: Any) -> None:
    with live_server(env_kwargs={"max_steps": 2}) as live:
        asked = _open_curriculum(page, live.url)
        message = page.locator("#curriculum-message")
        assert "without a curriculum" in message.inner_text()
        assert "--curriculum" in message.inner_text()
        assert "error" not in (message.get_attribute("class") or "")
        assert len(asked) == 1  # not three failed requests
        assert page.locator("#queue tbody tr").count() == 0


def test_curriculum_counts_are_integers(page: Any) -> None:
    with live_server(env_kwargs={"max_steps": 2}, curriculum=True) as live:
        _open_curriculum(page, live.url)
        stats = page.inner_text("#curriculum-stats")
        assert "episode" in stats
        for line in stats.splitlines():
            if line.split("\t")[0].strip() in ("episode", "too_easy", "learnable", "too_hard"):
                assert ".000" not in line, line
