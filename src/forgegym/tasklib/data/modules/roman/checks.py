def cases(rng):
    out = []
    for _ in range(25):
        n = rng.randint(1, 3999)
        out.append(("to_roman", [n]))
    for n in (1, 4, 9, 14, 40, 90, 400, 900, 3999):
        out.append(("to_roman", [n]))
    for s in ("I", "IV", "IX", "XIV", "XLII", "XC", "CD", "CM", "MMXXIV", "LXXX", "DCCC", "MMMCMXCIX"):
        out.append(("from_roman", [s]))
    out += [("to_roman", [4000]), ("from_roman", [""]), ("from_roman", ["ABC"])]
    return out
