import threading

from watchdog.observers import Observer


def test_stop_joins_emitters():
    observer = Observer()
    observer.start()
    observer.stop()
    observer.join()
    assert [t for t in threading.enumerate() if isinstance(t, Observer)] == []


def test_schedule_handler():
    calls = []
    observer = Observer()
    observer.schedule(lambda: calls.append(1))
    observer.start()
    assert observer.is_alive()
