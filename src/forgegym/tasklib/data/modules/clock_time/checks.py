def _t(rng):
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"


def cases(rng):
    out = []
    for _ in range(14):
        out.append(("to_minutes", [_t(rng)]))
        out.append(("from_minutes", [rng.randint(-3000, 3000)]))
        out.append(("add_minutes", [_t(rng), rng.randint(-2000, 2000)]))
        out.append(("minutes_between", [_t(rng), _t(rng)]))
        out.append(("to_12h", [_t(rng)]))
    out += [("to_minutes", ["12:60"]), ("to_12h", ["12:00"]), ("to_12h", ["00:00"]), ("to_12h", ["11:59"])]
    return out
