"""Breadth-first search on small undirected graphs given as edge lists."""

from collections import deque


def adjacency(edges):
    """Node -> sorted neighbour list."""
    adj = {}
    for u, v in edges:
        adj.setdefault(u, []).append(v)
        adj.setdefault(v, []).append(u)
    return {node: sorted(set(ns)) for node, ns in adj.items()}


def shortest_path(edges, start, goal):
    """A shortest path from ``start`` to ``goal`` (lexicographically smallest among
    shortest ones by BFS order), or ``None``."""
    adj = adjacency(edges)
    parents = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = []
            while node is not None:
                path.append(node)
                node = parents[node]
            return path[::-1]
        for nxt in adj.get(node, []):
            if nxt not in parents:
                parents[nxt] = node
                queue.append(nxt)
    return None


def reachable(edges, start):
    """Sorted nodes reachable from ``start`` (including it)."""
    adj = adjacency(edges)
    seen = {start}
    stack = [start]
    while stack:
        node = stack.pop()
        for nxt in adj.get(node, []):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return sorted(seen)


def components(edges):
    """Number of connected components among the nodes mentioned in ``edges``."""
    remaining = set(adjacency(edges))
    count = 0
    while remaining:
        start = min(remaining)
        remaining -= set(reachable(edges, start))
        count += 1
    return count
