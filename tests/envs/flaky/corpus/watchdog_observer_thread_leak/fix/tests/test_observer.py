import threading

import pytest

from watchdog.observers import Observer


@pytest.fixture
def observer():
    obs = Observer()
    yield obs
    obs.stop()
    if obs.is_alive():
        obs.join()


def test_stop_joins_emitters():
    observer = Observer()
    observer.start()
    observer.stop()
    observer.join()
    assert [t for t in threading.enumerate() if isinstance(t, Observer)] == []


def test_schedule_handler(observer):
    calls = []
    observer.schedule(lambda: calls.append(1))
    observer.start()
    assert observer.is_alive()
