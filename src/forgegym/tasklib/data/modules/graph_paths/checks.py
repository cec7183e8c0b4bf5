def cases(rng):
    out = []
    for _ in range(14):
        n = rng.randint(2, 8)
        edges = [[rng.randint(1, n), rng.randint(1, n)] for _ in range(rng.randint(1, 9))]
        a, b = rng.randint(1, n), rng.randint(1, n)
        out.append(("shortest_path", [edges, a, b]))
        out.append(("reachable", [edges, a]))
        out.append(("components", [edges]))
    return out
