def _iv(rng):
    a = rng.randint(0, 20)
    return [a, a + rng.randint(0, 6)]


def cases(rng):
    out = []
    for _ in range(14):
        ivs = [_iv(rng) for _ in range(rng.randint(0, 6))]
        out.append(("merge", [ivs]))
        out.append(("total_length", [ivs]))
        out.append(("overlaps", [_iv(rng), _iv(rng)]))
        out.append(("contains", [ivs, rng.randint(0, 28)]))
    return out
