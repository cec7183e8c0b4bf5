def query_replay_ids(segments, project_id):
    """Ids of the replays with at least one segment in ``project_id``."""
    ids = set()
    for segment in segments:
        if segment["project_id"] == project_id:
            ids.add(segment["replay_id"])
    return list(ids)
