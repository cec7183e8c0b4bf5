"""Small dense matrices as lists of rows."""


def transpose(m):
    """Rows become columns."""
    if not m:
        return []
    return [[m[r][c] for r in range(len(m))] for c in range(len(m[0]))]


def matmul(a, b):
    """Matrix product; raises ``ValueError`` on a shape mismatch."""
    if len(a[0]) != len(b):
        raise ValueError("shape mismatch")
    return [
        [sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
        for i in range(len(a))
    ]


def identity(n):
    """The ``n`` x ``n`` identity."""
    return [[1 if i == j else 0 for j in range(n)] for i in range(n)]


def trace(m):
    """Sum of the main diagonal."""
    return sum(m[i][i] for i in range(min(len(m), len(m[0]))))


def spiral(m):
    """Elements in clockwise spiral order from the top-left corner."""
    out = []
    top, bottom, left, right = 0, len(m) - 1, 0, len(m[0]) - 1 if m else -1
    while top <= bottom and left <= right:
        for c in range(left, right + 1):
            out.append(m[top][c])
        for r in range(top + 1, bottom + 1):
            out.append(m[r][right])
        if top < bottom:
            for c in range(right - 1, left - 1, -1):
                out.append(m[bottom][c])
        if left < right:
            for r in range(bottom - 1, top, -1):
                out.append(m[r][left])
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
    return out
