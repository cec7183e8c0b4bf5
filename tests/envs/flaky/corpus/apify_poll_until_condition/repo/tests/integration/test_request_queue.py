import time

from apify_client.request_queue import RequestQueueClient


def test_request_queue_unlock_requests():
    rq = RequestQueueClient()
    assert rq.list_and_lock_head(["r1", "r2", "r3"]) == ["r1", "r2", "r3"]
    time.sleep(0.001)
    assert rq.unlock_requests() == 3
