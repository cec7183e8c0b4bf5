from sentry.replays.query import query_replay_ids


def test_query_replay_ids():
    segments = [
        {"project_id": 1, "replay_id": "a1b2"},
        {"project_id": 1, "replay_id": "c3d4"},
        {"project_id": 2, "replay_id": "zzzz"},
        {"project_id": 1, "replay_id": "e5f6"},
        {"project_id": 1, "replay_id": "a1b2"},
    ]
    ids = query_replay_ids(segments, project_id=1)
    assert sorted(ids) == ["a1b2", "c3d4", "e5f6"]
