def cases(rng):
    out = []
    for _ in range(15):
        items = [rng.randint(0, 9) for _ in range(rng.randint(0, 7))]
        k = rng.randint(0, 10)
        out.append(("rotate_left", [items, k]))
        out.append(("rotate_right", [items, k]))
        s = "".join(rng.choice("abc") for _ in range(rng.randint(0, 6)))
        t = s[k % len(s):] + s[: k % len(s)] if s else ""
        out.append(("is_rotation", [s, t if rng.random() < 0.6 else t + "a"]))
        out.append(("min_rotation", [s]))
    return out
