def cases(rng):
    out = []
    for _ in range(14):
        s = "".join(rng.choice("abA ,") for _ in range(rng.randint(0, 9)))
        out.append(("is_palindrome", [s]))
        out.append(("longest_palindrome", [s.replace(" ", "")]))
        out.append(("reverse_words", [s]))
        words = ["".join(rng.choice("ab") for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(0, 4))]
        out.append(("common_prefix", [words]))
    return out
