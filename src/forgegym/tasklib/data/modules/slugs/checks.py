def cases(rng):
    out = []
    for _ in range(15):
        text = "".join(rng.choice("aB1 -_!Zq") for _ in range(rng.randint(0, 12)))
        out.append(("slugify", [text]))
        out.append(("camel_to_snake", [text.replace(" ", "")]))
        out.append(("snake_to_camel", [text.replace(" ", "_"), rng.random() < 0.5]))
    return out
