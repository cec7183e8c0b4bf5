def cases(rng):
    out = []
    for _ in range(14):
        items = [rng.randint(-9, 9) for _ in range(rng.randint(0, 12))]
        out.append(("chunk_list", [items, rng.randint(1, 5)]))
        out.append(("windows", [items, rng.randint(1, 4)]))
        out.append(("pairwise", [items]))
        out.append(("flatten", [[items[:3], items[3:]]]))
    out.append(("chunk_list", [[1, 2], 0]))
    out.append(("windows", [[1, 2], -1]))
    return out
