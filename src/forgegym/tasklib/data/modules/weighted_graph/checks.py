def cases(rng):
    out = []
    for _ in range(15):
        n = rng.randint(2, 6)
        edges = [[rng.randint(1, n), rng.randint(1, n), rng.randint(0, 9)] for _ in range(rng.randint(1, 10))]
        out.append(("distances", [edges, rng.randint(1, n)]))
        out.append(("path_cost", [edges, [rng.randint(1, n) for _ in range(rng.randint(1, 4))]]))
        out.append(("out_degrees", [edges]))
    return out
