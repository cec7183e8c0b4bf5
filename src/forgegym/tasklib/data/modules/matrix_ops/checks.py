def _mat(rng, r, c):
    return [[rng.randint(-4, 4) for _ in range(c)] for _ in range(r)]


def cases(rng):
    out = []
    for _ in range(12):
        r, k, c = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4)
        out.append(("transpose", [_mat(rng, r, c)]))
        out.append(("matmul", [_mat(rng, r, k), _mat(rng, k, c)]))
        out.append(("trace", [_mat(rng, r, c)]))
        out.append(("spiral", [_mat(rng, r, c)]))
        out.append(("identity", [rng.randint(0, 4)]))
    out.append(("matmul", [[[1, 2]], [[1]]]))
    return out
