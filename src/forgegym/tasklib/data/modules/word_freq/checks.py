def cases(rng):
    out = []
    for _ in range(15):
        text = " ".join(rng.choice(["a", "B", "ca't", "dd", "a,", "e!"]) for _ in range(rng.randint(0, 10)))
        out.append(("words", [text]))
        out.append(("counts", [text]))
        out.append(("top_k", [text, rng.randint(0, 4)]))
        out.append(("hapaxes", [text]))
    return out
