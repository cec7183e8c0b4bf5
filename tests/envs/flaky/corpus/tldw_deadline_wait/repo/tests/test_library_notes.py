import time

from tldw_chatbook.library import NoteScreen


def test_note_conflict_shows_overwrite():
    screen = NoteScreen(stored_version=3)
    screen.save(version=2, text="my edits")
    for _ in range(150):
        if screen.autosave_state == "conflict":
            break
        time.sleep(0.00002)
    assert screen.autosave_state == "conflict"
