def cases(rng):
    out = []
    for _ in range(15):
        vals = [rng.randint(-5, 9) for _ in range(rng.randint(0, 9))]
        out.append(("kth_smallest", [vals, rng.randint(0, len(vals) + 1)]))
        out.append(("top_n", [vals, rng.randint(0, 4)]))
        out.append(("second_largest", [vals]))
        out.append(("argmax", [vals]))
    return out
