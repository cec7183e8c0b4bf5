def _frac(rng):
    return [rng.randint(-12, 12), rng.choice([-1, 1]) * rng.randint(1, 12)]


def cases(rng):
    out = []
    for _ in range(12):
        a, b = rng.randint(-40, 40), rng.randint(-40, 40)
        out.append(("gcd", [a, b]))
        out.append(("lcm", [a, b]))
        out.append(("reduce", _frac(rng)))
        out.append(("add", [_frac(rng), _frac(rng)]))
        out.append(("compare", [_frac(rng), _frac(rng)]))
    out.append(("reduce", [3, 0]))
    return out
