WORDS = ["a", "to", "fox", "jump", "quick", "lazy", "brown", "extraordinary", "x", "over"]


def cases(rng):
    out = []
    for _ in range(14):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 10)))
        out.append(("wrap", [text, rng.randint(1, 16)]))
        word = rng.choice(WORDS)
        out.append(("center", [word, rng.randint(0, 14), rng.choice("*-.")]))
        out.append(("truncate", [text, rng.randint(0, 20)]))
    out.append(("wrap", ["a b", 0]))
    return out
