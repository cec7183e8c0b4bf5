def cases(rng):
    out = []
    for _ in range(20):
        s = "".join(rng.choice("()[]{}a((") for _ in range(rng.randint(0, 10)))
        out.append(("is_balanced", [s]))
        out.append(("first_error", [s]))
        out.append(("max_depth", ["".join(c for c in s if c in "()a")]))
    return out
