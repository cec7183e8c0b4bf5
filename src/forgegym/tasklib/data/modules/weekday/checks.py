def cases(rng):
    out = []
    for _ in range(18):
        y, m, d = rng.randint(1800, 2200), rng.randint(1, 12), rng.randint(1, 28)
        out.append(("weekday", [y, m, d]))
        out.append(("is_weekend", [y, m, d]))
        out.append(("days_until", [rng.randint(0, 6), rng.randint(0, 6)]))
    out.append(("weekday_name", [2024, 2, 29]))
    return out
