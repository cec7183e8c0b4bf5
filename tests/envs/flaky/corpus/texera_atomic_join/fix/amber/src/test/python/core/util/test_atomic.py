import threading

from amber.src.main.python.core.util.atomic import AtomicInteger


def test_get_and_set_does_not_deadlock_on_non_reentrant_lock():
    a = AtomicInteger(1)
    started, completed = threading.Event(), threading.Event()
    errors = []

    def attempt():
        started.set()
        try:
            a.get_and_set(99)
            completed.set()
            # teardown of the worker (the real one releases its context here)
            sum(range(20000))
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    started.wait(timeout=0.5)
    completed.wait(timeout=0.5)
    worker.join(timeout=0.5)
    assert not worker.is_alive()
    assert a.get() == 99 and not errors
