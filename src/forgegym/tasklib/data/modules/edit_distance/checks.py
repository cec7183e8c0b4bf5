def _w(rng):
    return "".join(rng.choice("abc") for _ in range(rng.randint(0, 6)))


def cases(rng):
    out = []
    for _ in range(14):
        a, b = _w(rng), _w(rng)
        out.append(("levenshtein", [a, b]))
        out.append(("lcs_length", [a, b]))
        out.append(("hamming", [a, a[::-1] if rng.random() < 0.7 else b]))
        out.append(("closest", [a, [_w(rng) for _ in range(rng.randint(0, 4))]]))
    return out
