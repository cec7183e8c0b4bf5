import threading

from dagster.event_log import EventLogStorage, EventLogSubscription


def test_event_log_subscription_chunked():
    storage = EventLogStorage([f"event {i}" for i in range(7)])
    received = []
    done = threading.Event()
    subscription = EventLogSubscription(
        storage, received.append, chunk_size=2, on_done=done.set
    )
    subscription.start()
    assert done.wait(5)
    assert [e.message for e in received] == [f"event {i}" for i in range(7)]
