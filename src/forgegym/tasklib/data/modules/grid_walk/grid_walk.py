"""Counting and walking paths on small grids."""


def count_paths(rows, cols, blocked):
    """Monotone (right/down) paths from the top-left to the bottom-right cell avoiding
    ``blocked`` cells (``[r, c]`` pairs)."""
    walls = {(r, c) for r, c in blocked}
    ways = [[0] * cols for _ in range(rows)]
    for r in range(rows):
        for c in range(cols):
            if (r, c) in walls:
                continue
            if r == 0 and c == 0:
                ways[r][c] = 1
                continue
            up = ways[r - 1][c] if r > 0 else 0
            left = ways[r][c - 1] if c > 0 else 0
            ways[r][c] = up + left
    return ways[rows - 1][cols - 1]


def neighbors(r, c, rows, cols):
    """In-grid 4-neighbours of ``[r, c]`` in up, down, left, right order."""
    out = []
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        nr, nc = r + dr, c + dc
        if 0 <= nr < rows and 0 <= nc < cols:
            out.append([nr, nc])
    return out


def walk(moves, start=(0, 0)):
    """Final ``[x, y]`` after moves like ``"UUDLR"`` (U is +y)."""
    x, y = start
    for move in moves:
        if move == "U":
            y += 1
        elif move == "D":
            y -= 1
        elif move == "L":
            x -= 1
        elif move == "R":
            x += 1
        else:
            raise ValueError(f"bad move {move!r}")
    return [x, y]


def manhattan(a, b):
    """Manhattan distance of two points."""
    return abs(a[0] - b[0]) + abs(a[1] - b[1])
