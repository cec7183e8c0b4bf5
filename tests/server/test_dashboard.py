"""The dashboard in a real headless Chromium: play an episode and see the reward
breakdown; the task bank, the curriculum and the family statistics render."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401
from forgegym.policies import make as make_policy
from tests.server.conftest import SERVED_ENV, live_server

playwright = pytest.importorskip("playwright.sync_api")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium)")

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),  # a fresh --user-data-dir
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


def _reference_episode() -> tuple[str, str, float, float]:
    """A task, its reference fix, and the in-process reward and score of playing it."""
    env = gym.make(SERVED_ENV, max_steps=3)
    try:
        observation, info = env.reset(seed=3)
        action = make_policy("reference", env)(observation, info)
        _, reward, _, _, info = env.step(action)
        return info["task_id"], action, reward, info["reward_breakdown"]["total"]
    finally:
        env.close()


def test_dashboard_plays_an_episode_and_shows_the_breakdown(page: Any, tmp_path: Path) -> None:
    task_id, action, reward, total = _reference_episode()
    with live_server(env_kwargs={"max_steps": 3}, curriculum=True) as live:
        page.goto(live.url + "/")
        page.wait_for_function(f"document.querySelector('#env-id').textContent === {SERVED_ENV!r}")
        page.fill("#task-id", task_id)
        page.click("#reset")
        page.wait_for_function("document.querySelector('#observation').textContent.length > 100")
        assert task_id in page.inner_text("#episode")
        page.fill("#action", action)
        page.click("#step")
        page.wait_for_selector("#breakdown-table")
        terms = page.locator("#breakdown-table tbody tr")
        assert terms.count() >= 2  # named terms, each with value and weight
        assert page.inner_text("#breakdown-total") == f"total {total:.3f}"
        assert page.inner_text("#rewards tbody tr td.reward") == f"{reward:.3f}"
        assert "episode over" in page.inner_text("#status")
        page.screenshot(path=str(tmp_path / "play.png"))

        page.click(".tab[data-tab='tasks']")
        page.wait_for_selector("#task-table tbody tr td")
        assert page.locator("#task-table tbody tr").count() == 20
        assert "/" in page.inner_text("#task-table tbody tr td")  # a task id

        page.click(".tab[data-tab='curriculum']")
        page.wait_for_function(
            "document.querySelector('#curriculum-message').textContent.startsWith('episode 1')"
        )
        queue = page.inner_text("#queue tbody")
        assert task_id in queue  # the played task was recorded by the scheduler
        assert page.locator("#curve polyline").count() == 2

        page.click(".tab[data-tab='stats']")
        page.wait_for_selector("#stats-body h2")
        from forgegym.family import families

        with_stats = [f.name for f in families() if f.report or f.stats_function()]
        served = next(f.name for f in families() if SERVED_ENV in f.env_ids)
        options = page.locator("#stats-family option").all_inner_texts()
        assert options == with_stats
        assert page.inner_text("#stats-body h2") == served  # the served family first
        assert page.locator("#stats-body table tr").count() > 1


def test_the_leaderboard_tab_reads_the_results_files(page: Any, tmp_path: Path) -> None:
    from forgegym.play.evaluation import evaluate
    from forgegym.play.leaderboard import build_leaderboard, load_results

    files = []
    for policy in ("noop", "reference"):  # real eval results on the same tasks
        path = tmp_path / f"{policy}.json"
        evaluate("Forge/Oversight-v0", policy, episodes=4, seed=0).save(path)
        files.append(str(path))
    expected = build_leaderboard(load_results(files))
    with live_server(env_kwargs={"max_steps": 3}, results=files) as live:
        page.goto(live.url + "/")
        page.click(".tab[data-tab='leaderboard']")
        page.wait_for_selector("#leaderboard-table tbody tr td")
        rows = page.locator("#leaderboard-table tbody tr")
        assert rows.count() == 2
        assert page.locator("#leaderboard-table thead th").all_inner_texts() == [
            "rank",
            "model",
            "oversight",
            "aggregate",
            "tasks",
            "runs",
        ]
        assert rows.nth(0).locator("td.model").inner_text() == "reference"
        top = expected.rows[0].aggregate
        assert rows.nth(0).locator("td.aggregate").inner_text() == (
            f"{top.value:.3f} [{top.low:.3f}, {top.high:.3f}]"
        )
        difference = page.inner_text("#leaderboard-differences li")
        assert difference.startswith("reference − noop: +") and "on 4 shared tasks" in difference
        page.select_option("#leaderboard-metric", "success")
        page.wait_for_function(
            "document.querySelector('#leaderboard-message').textContent.startsWith('metric success')"
        )
        assert rows.nth(1).locator("td.aggregate").inner_text().startswith("0.000")
    with live_server(env_kwargs={"max_steps": 3}) as live:  # no results: a clear message
        page.goto(live.url + "/")
        page.click(".tab[data-tab='leaderboard']")
        page.wait_for_function(
            "document.querySelector('#leaderboard-message').textContent.includes('--results')"
        )


def test_run_tests_and_submit_buttons_send_their_action(page: Any) -> None:
    """One click on ``run_tests`` or ``submit`` steps the episode (not only fills the box);
    before a reset they are disabled, like Step."""
    with live_server(env_kwargs={"max_steps": 3}) as live:
        page.goto(live.url + "/")
        page.wait_for_function(f"document.querySelector('#env-id').textContent === {SERVED_ENV!r}")
        assert page.is_disabled(".template[data-action*='run_tests']")
        page.click("#reset")
        page.wait_for_function("document.querySelector('#observation').textContent.length > 100")
        page.click(".template[data-action*='run_tests']")
        page.wait_for_selector("#rewards tbody tr")
        assert page.locator("#rewards tbody tr").count() == 1
        assert page.inner_text("#status") == "ok"
        page.wait_for_function("!document.querySelector('.template[data-action*=submit]').disabled")
        page.click(".template[data-action*='submit']")
        page.wait_for_function(
            "document.querySelector('#status').textContent.startsWith('episode over')"
        )
        assert page.locator("#rewards tbody tr").count() == 2
        assert page.is_disabled(".template[data-action*='submit']") and page.is_disabled("#step")
