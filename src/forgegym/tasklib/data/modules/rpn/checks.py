import re


def _expr(rng, depth):
    if depth == 0 or rng.random() < 0.3:
        return str(rng.randint(1, 20))
    left, right = _expr(rng, depth - 1), _expr(rng, depth - 1)
    op = rng.choice("+-*/")
    text = f"{left}{op}{right}"
    return f"({text})" if rng.random() < 0.4 else text


def cases(rng):
    out = []
    for _ in range(16):
        e = _expr(rng, 3)
        out.append(("evaluate", [e]))
        out.append(("tokenize", [e.replace("*", " * ")]))
        out.append(("to_rpn", [re.findall(r"\d+|[-+*/()]", e)]))
    out += [("evaluate", ["1+(2"]), ("evaluate", ["2 $ 3"]), ("eval_rpn", [["1", "2"]])]
    return out
