def cases(rng):
    out = []
    for _ in range(15):
        items = [rng.randint(0, 5) for _ in range(rng.randint(0, 10))]
        for fn in ("unique", "duplicates", "first_repeat_index", "compact"):
            out.append((fn, [items]))
    return out
