def cases(rng):
    out = []
    for _ in range(16):
        items = [rng.randint(0, 4) for _ in range(rng.randint(0, 9))]
        out.append(("group_consecutive", [items]))
        out.append(("take_while_increasing", [items]))
        out.append(("interleave", [items[:3], items[3:]]))
        out.append(("partition", [items, rng.randint(0, 4)]))
    return out
