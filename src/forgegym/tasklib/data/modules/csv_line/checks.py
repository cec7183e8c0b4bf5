def _field(rng):
    return "".join(rng.choice('ab,"; =') for _ in range(rng.randint(0, 4)))


def cases(rng):
    out = []
    for _ in range(14):
        fields = [_field(rng) for _ in range(rng.randint(1, 4))]
        out.append(("join_line", [fields]))
        out.append(("split_line", [",".join(f.replace('"', "") for f in fields)]))
        keys = [rng.choice(["a", " b", "c "]) + "=" + _field(rng).replace(";", "") for _ in range(3)]
        out.append(("parse_pairs", [";".join(keys)]))
    out += [("split_line", ['"a""b",c']), ("split_line", ['"open']), ("parse_pairs", ["a=1;oops"])]
    out.append(("split_line", ["a;b;c", ";"]))
    return out
