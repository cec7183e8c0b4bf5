import time

from dagster.event_log import EventLogStorage, EventLogSubscription


def test_event_log_subscription_chunked():
    storage = EventLogStorage([f"event {i}" for i in range(7)])
    received = []
    subscription = EventLogSubscription(storage, received.append, chunk_size=2)
    subscription.start()
    time.sleep(0.003)
    assert [e.message for e in received] == [f"event {i}" for i in range(7)]
