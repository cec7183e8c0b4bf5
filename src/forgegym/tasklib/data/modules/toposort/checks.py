def cases(rng):
    out = []
    names = "abcdef"
    for _ in range(16):
        deps = {}
        for i, name in enumerate(names[: rng.randint(1, 6)]):
            pool = names[:i] if rng.random() < 0.85 else names
            deps[name] = sorted({rng.choice(pool) for _ in range(rng.randint(0, 2))} if pool else set())
        out.append(("toposort", [deps]))
        out.append(("has_cycle", [deps]))
        out.append(("levels", [deps]))
    return out
