def cases(rng):
    out = []
    for _ in range(14):
        vals = [rng.randint(-20, 40) for _ in range(rng.randint(1, 9))]
        out.append(("mean", [vals]))
        out.append(("median", [vals]))
        out.append(("std_dev", [vals]))
        out.append(("std_dev", [vals, True]))
        out.append(("percentile", [vals, rng.choice([10, 25, 33, 50, 75, 90, 99])]))
    out += [
        ("mean", [[]]),
        ("median", [[]]),
        ("std_dev", [[]]),
        ("std_dev", [[3], True]),
        ("percentile", [[], 50]),
        ("percentile", [[1, 2], 101]),
        ("percentile", [[1, 2], -1]),
        ("percentile", [[1, 2, 3, 4], 37.5]),
        ("percentile", [[1, 2], 33.3333333]),
        ("percentile", [[-4, 10, 3], 12.345678]),
        ("std_dev", [[rng.randint(-9, 9), rng.randint(10, 30)], True]),
        ("std_dev", [[rng.randint(-9, 9), rng.randint(10, 30)], True]),
        ("std_dev", [[rng.randint(-9, 9), rng.randint(10, 30), 4], True]),
    ]
    return out
