"""Scheduling with half-open time slots ``[start, end)``."""


def max_non_overlapping(slots):
    """Most slots that can be attended (greedy by end time)."""
    count = 0
    last_end = None
    for start, end in sorted(slots, key=lambda s: (s[1], s[0])):
        if last_end is None or start >= last_end:
            count += 1
            last_end = end
    return count


def rooms_needed(slots):
    """Minimum rooms so that no two overlapping slots share a room."""
    events = []
    for start, end in slots:
        events.append((start, 1))
        events.append((end, -1))
    events.sort()
    rooms = best = 0
    for _, delta in events:
        rooms += delta
        best = max(best, rooms)
    return best


def free_slots(busy, day_start, day_end):
    """Gaps in ``[day_start, day_end)`` not covered by ``busy`` slots, in order."""
    gaps = []
    cursor = day_start
    for start, end in sorted(busy):
        if start > cursor:
            gaps.append([cursor, min(start, day_end)])
        cursor = max(cursor, end)
        if cursor >= day_end:
            break
    if cursor < day_end:
        gaps.append([cursor, day_end])
    return [g for g in gaps if g[0] < g[1]]
