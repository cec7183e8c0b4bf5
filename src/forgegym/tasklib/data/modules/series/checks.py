def cases(rng):
    out = []
    for _ in range(15):
        vals = [rng.randint(-5, 9) for _ in range(rng.randint(0, 10))]
        out.append(("cumulative", [vals]))
        out.append(("differences", [vals]))
        out.append(("moving_average", [vals, rng.randint(1, 4)]))
        out.append(("longest_increasing_run", [vals]))
    return out
