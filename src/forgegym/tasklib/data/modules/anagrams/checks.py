def cases(rng):
    out = []
    for _ in range(14):
        words = ["".join(rng.choice("abtA!") for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(0, 6))]
        out.append(("group_anagrams", [words]))
        out.append(("is_anagram", [rng.choice(words or [""]), rng.choice(words or ["a"])]))
        out.append(("letter_counts", [" ".join(words)]))
        out.append(("signature", [" ".join(words)]))
    return out
