def cases(rng):
    out = []
    for _ in range(16):
        n = rng.randint(0, 300)
        out.append(("popcount", [n]))
        out.append(("is_power_of_two", [rng.choice([n, 1 << rng.randint(0, 8)])]))
        out.append(("reverse_bits", [n, rng.randint(1, 9)]))
        out.append(("bit_positions", [n]))
    out += [("gray_code", [k]) for k in range(5)]
    return out
