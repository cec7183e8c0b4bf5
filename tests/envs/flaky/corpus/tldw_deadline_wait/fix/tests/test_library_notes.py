import time

from tldw_chatbook.library import NoteScreen


def _wait_for_condition(predicate, *, timeout=15.0, interval=0.00002):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            raise AssertionError("condition never reached")
        time.sleep(interval)


def test_note_conflict_shows_overwrite():
    screen = NoteScreen(stored_version=3)
    screen.save(version=2, text="my edits")
    _wait_for_condition(lambda: screen.autosave_state == "conflict")
    assert screen.autosave_state == "conflict"
