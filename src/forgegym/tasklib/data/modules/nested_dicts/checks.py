def _tree(rng, level):
    if level == 0 or rng.random() < 0.3:
        return rng.randint(0, 9)
    return {rng.choice("abc"): _tree(rng, level - 1) for _ in range(rng.randint(0, 3))}


def cases(rng):
    out = []
    for _ in range(15):
        tree = _tree(rng, 3)
        tree = tree if isinstance(tree, dict) else {"x": tree}
        out.append(("flatten", [tree]))
        out.append(("unflatten", [{k: v for k, v in tree.items() if not isinstance(v, dict)}]))
        out.append(("get_path", [tree, ".".join(rng.choice("abc") for _ in range(rng.randint(1, 3))), -1]))
        out.append(("depth", [tree]))
    return out
