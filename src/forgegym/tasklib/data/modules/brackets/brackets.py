"""Bracket matching."""

PAIRS = {")": "(", "]": "[", "}": "{"}


def is_balanced(text):
    """Whether every bracket in ``text`` is properly matched and nested."""
    stack = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in PAIRS:
            if not stack or stack[-1] != PAIRS[ch]:
                return False
            stack.pop()
    return not stack


def max_depth(text):
    """Deepest nesting of round parentheses (assumes they are balanced)."""
    depth = best = 0
    for ch in text:
        if ch == "(":
            depth += 1
            best = max(best, depth)
        elif ch == ")":
            depth -= 1
    return best


def first_error(text):
    """Index of the first unmatched closing bracket, else of the first unclosed opener,
    else -1."""
    stack = []
    for i, ch in enumerate(text):
        if ch in "([{":
            stack.append(i)
        elif ch in PAIRS:
            if not stack or text[stack[-1]] != PAIRS[ch]:
                return i
            stack.pop()
    return stack[0] if stack else -1
