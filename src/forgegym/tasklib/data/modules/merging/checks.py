def _s(rng):
    return sorted(rng.randint(0, 9) for _ in range(rng.randint(0, 6)))


def cases(rng):
    out = []
    for _ in range(15):
        out.append(("merge", [_s(rng), _s(rng)]))
        out.append(("merge_all", [[_s(rng) for _ in range(rng.randint(0, 3))]]))
        out.append(("is_sorted", [[rng.randint(0, 3) for _ in range(rng.randint(0, 5))]]))
        out.append(("intersect_sorted", [_s(rng), _s(rng)]))
    return out
