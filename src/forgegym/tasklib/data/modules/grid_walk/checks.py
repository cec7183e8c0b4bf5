def cases(rng):
    out = []
    for _ in range(15):
        rows, cols = rng.randint(1, 5), rng.randint(1, 5)
        blocked = [[rng.randint(0, rows - 1), rng.randint(0, cols - 1)] for _ in range(rng.randint(0, 3))]
        out.append(("count_paths", [rows, cols, blocked]))
        out.append(("neighbors", [rng.randint(0, rows - 1), rng.randint(0, cols - 1), rows, cols]))
        out.append(("walk", ["".join(rng.choice("UDLR") for _ in range(rng.randint(0, 8)))]))
        out.append(("manhattan", [[rng.randint(-5, 5), rng.randint(-5, 5)], [rng.randint(-5, 5), rng.randint(-5, 5)]]))
    return out
