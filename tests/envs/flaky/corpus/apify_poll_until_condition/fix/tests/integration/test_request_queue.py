import time

from apify_client.request_queue import RequestQueueClient


def poll_until_condition(condition, timeout=5.0, interval=0.001):
    """Call ``condition`` until it is true; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s")


def test_request_queue_unlock_requests():
    rq = RequestQueueClient()
    assert rq.list_and_lock_head(["r1", "r2", "r3"]) == ["r1", "r2", "r3"]
    poll_until_condition(lambda: len(rq.list_head()["locked"]) == 3)
    assert rq.unlock_requests() == 3
