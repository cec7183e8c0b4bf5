def cases(rng):
    out = []
    for _ in range(12):
        y = rng.choice([1900, 2000, 2023, 2024, 2100, rng.randint(1800, 2200)])
        m = rng.randint(1, 12)
        out.append(("is_leap", [y]))
        out.append(("days_in_month", [y, m]))
        out.append(("day_of_year", [y, m, rng.randint(1, 28)]))
        out.append(("add_days", [y, m, rng.randint(1, 28), rng.randint(0, 400)]))
    out += [("days_in_month", [2024, 0]), ("is_leap", [1600]), ("add_days", [2024, 12, 31, 0])]
    return out
