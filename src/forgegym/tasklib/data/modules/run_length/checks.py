def cases(rng):
    out = []
    for _ in range(16):
        text = "".join(rng.choice("aab") * rng.randint(1, 3) for _ in range(rng.randint(0, 6)))
        out.append(("encode", [text]))
        out.append(("compress", [text]))
        out.append(("longest_run", [text]))
        runs = [[rng.choice("xyz"), rng.randint(0, 3)] for _ in range(rng.randint(0, 4))]
        out.append(("decode", [runs]))
    out.append(("decode", [[["q", -2]]]))
    return out
