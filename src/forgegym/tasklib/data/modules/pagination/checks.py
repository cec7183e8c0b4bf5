def cases(rng):
    out = []
    for _ in range(15):
        total, per = rng.randint(0, 30), rng.randint(1, 7)
        out.append(("page_count", [total, per]))
        items = list(range(total))
        out.append(("page_items", [items, rng.randint(0, 6), per]))
        pages = rng.randint(1, 12)
        out.append(("page_window", [rng.randint(1, pages), pages, rng.randint(1, 6)]))
    out.append(("page_count", [3, 0]))
    return out
