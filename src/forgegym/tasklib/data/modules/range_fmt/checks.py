def cases(rng):
    out = []
    for _ in range(15):
        nums = [rng.randint(-3, 15) for _ in range(rng.randint(0, 10))]
        out.append(("summarize", [nums]))
        lo = rng.randint(-3, 8)
        text = f"{lo}-{lo + rng.randint(0, 4)},{rng.randint(0, 20)}"
        out.append(("expand", [text]))
        out.append(("count", [text]))
    out.append(("expand", ["3-1"]))
    return out
