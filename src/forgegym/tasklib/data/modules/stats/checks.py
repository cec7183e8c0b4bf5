def cases(rng):
    out = []
    for _ in range(12):
        vals = [rng.randint(-5, 9) for _ in range(rng.randint(1, 9))]
        for fn in ("mean", "median", "mode", "variance", "value_range"):
            out.append((fn, [vals]))
    out += [("median", [[]]), ("mode", [[]]), ("variance", [[]])]
    return out
