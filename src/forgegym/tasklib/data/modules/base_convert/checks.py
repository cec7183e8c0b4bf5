def cases(rng):
    out = []
    for _ in range(15):
        n, b = rng.randint(-3000, 3000), rng.randint(2, 36)
        out.append(("to_base", [n, b]))
        out.append(("digit_sum", [n, rng.randint(2, 16)]))
        digits = "".join(rng.choice("0123456789abcdefz") for _ in range(rng.randint(1, 4)))
        out.append(("from_base", [digits, rng.randint(2, 36)]))
    out += [("to_base", [5, 1]), ("from_base", ["-", 10]), ("from_base", ["Zz", 36])]
    return out
