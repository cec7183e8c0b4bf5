"""Arithmetic tokenizing and reverse Polish notation."""

PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def tokenize(expr):
    """Split an integer arithmetic expression into number and operator tokens."""
    tokens = []
    number = ""
    for ch in expr:
        if ch.isdigit():
            number += ch
            continue
        if number:
            tokens.append(number)
            number = ""
        if ch in PRECEDENCE or ch in "()":
            tokens.append(ch)
        elif not ch.isspace():
            raise ValueError(f"bad character {ch!r}")
    if number:
        tokens.append(number)
    return tokens


def to_rpn(tokens):
    """Shunting-yard conversion (left-associative operators)."""
    output = []
    stack = []
    for tok in tokens:
        if tok.isdigit():
            output.append(tok)
        elif tok in PRECEDENCE:
            while stack and stack[-1] in PRECEDENCE and PRECEDENCE[stack[-1]] >= PRECEDENCE[tok]:
                output.append(stack.pop())
            stack.append(tok)
        elif tok == "(":
            stack.append(tok)
        else:
            while stack and stack[-1] != "(":
                output.append(stack.pop())
            if not stack:
                raise ValueError("unbalanced parentheses")
            stack.pop()
    while stack:
        tok = stack.pop()
        if tok == "(":
            raise ValueError("unbalanced parentheses")
        output.append(tok)
    return output


def eval_rpn(tokens):
    """Evaluate RPN with integer floor division."""
    stack = []
    for tok in tokens:
        if tok in PRECEDENCE:
            if len(stack) < 2:
                raise ValueError("not enough operands")
            b = stack.pop()
            a = stack.pop()
            if tok == "+":
                stack.append(a + b)
            elif tok == "-":
                stack.append(a - b)
            elif tok == "*":
                stack.append(a * b)
            else:
                stack.append(a // b)
        else:
            stack.append(int(tok))
    if len(stack) != 1:
        raise ValueError("malformed expression")
    return stack[0]


def evaluate(expr):
    """Evaluate an infix integer expression."""
    return eval_rpn(to_rpn(tokenize(expr)))
