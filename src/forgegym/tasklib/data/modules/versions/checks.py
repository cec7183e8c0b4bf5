def _v(rng):
    return ".".join(str(rng.randint(0, 12)) for _ in range(rng.randint(1, 4)))


def cases(rng):
    out = []
    for _ in range(14):
        out.append(("parse", [_v(rng)]))
        out.append(("compare", [_v(rng), _v(rng)]))
        out.append(("bump", [_v(rng)[:5].rstrip("."), rng.choice(["major", "minor", "patch"])]))
        out.append(("latest", [[_v(rng) for _ in range(rng.randint(0, 4))]]))
    out += [("compare", ["1.0", "1.0.0.0"]), ("parse", ["1.a"]), ("bump", ["1.2.3", "build"])]
    return out
