def cases(rng):
    out = []
    for _ in range(15):
        cents = rng.randint(-200000, 200000)
        out.append(("format_amount", [cents]))
        out.append(("split_evenly", [abs(cents) % 1000, rng.randint(1, 7)]))
        out.append(("apply_discount", [abs(cents), rng.randint(0, 100)]))
        text = f"{rng.choice(['', '$', '-'])}{rng.randint(0, 5000):,}" + rng.choice(["", ".5", ".05", ".99", ".123"])
        out.append(("parse_amount", [text]))
    out += [("split_evenly", [5, 0]), ("apply_discount", [100, 101])]
    return out
