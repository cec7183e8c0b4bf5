def _slots(rng):
    out = []
    for _ in range(rng.randint(0, 6)):
        a = rng.randint(0, 20)
        out.append([a, a + rng.randint(1, 6)])
    return out


def cases(rng):
    out = []
    for _ in range(16):
        out.append(("max_non_overlapping", [_slots(rng)]))
        out.append(("rooms_needed", [_slots(rng)]))
        lo = rng.randint(0, 8)
        out.append(("free_slots", [_slots(rng), lo, lo + rng.randint(1, 16)]))
    return out
