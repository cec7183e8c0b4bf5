def cases(rng):
    out = []
    for _ in range(15):
        text = "".join(rng.choice("abyzAYZ ,!") for _ in range(rng.randint(0, 10)))
        out.append(("caesar", [text, rng.randint(-30, 30)]))
        key = "".join(rng.choice("abzXY") for _ in range(rng.randint(1, 4)))
        out.append(("vigenere", [text, key, rng.random() < 0.5]))
        out.append(("atbash", [text]))
    out.append(("vigenere", ["abc", ""]))
    return out
