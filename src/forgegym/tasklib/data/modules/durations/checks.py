def cases(rng):
    out = []
    for _ in range(15):
        secs = rng.randint(0, 200000)
        out.append(("format_duration", [secs]))
        out.append(("clock", [secs]))
        text = "".join(f"{rng.randint(0, 30)}{u}" for u in "dhms" if rng.random() < 0.6)
        out.append(("parse_duration", [text]))
    out += [("parse_duration", ["5x"]), ("parse_duration", ["m"]), ("format_duration", [-1])]
    return out
