def cases(rng):
    out = []
    for _ in range(14):
        items = sorted(rng.randint(0, 12) for _ in range(rng.randint(0, 10)))
        x = rng.randint(-1, 13)
        out.append(("bisect_left", [items, x]))
        out.append(("bisect_right", [items, x]))
        out.append(("find", [items, x]))
        lo = rng.randint(-1, 12)
        out.append(("count_in_range", [items, lo, lo + rng.randint(0, 6)]))
    return out
