"""Shortest paths on small weighted directed graphs (edges ``[u, v, w]``)."""

import heapq


def distances(edges, source):
    """Dijkstra: node -> shortest distance from ``source`` for reachable nodes (keys are str)."""
    adj = {}
    for u, v, w in edges:
        if w < 0:
            raise ValueError("negative weight")
        adj.setdefault(u, []).append((v, w))
    dist = {source: 0}
    heap = [(0, source)]
    while heap:
        d, node = heapq.heappop(heap)
        if d > dist[node]:
            continue
        for nxt, w in adj.get(node, []):
            nd = d + w
            if nxt not in dist or nd < dist[nxt]:
                dist[nxt] = nd
                heapq.heappush(heap, (nd, nxt))
    return {str(k): v for k, v in sorted(dist.items())}


def path_cost(edges, path):
    """Total weight along ``path`` using the cheapest parallel edge; None if an edge is missing."""
    best = {}
    for u, v, w in edges:
        if (u, v) not in best or w < best[(u, v)]:
            best[(u, v)] = w
    total = 0
    for u, v in zip(path, path[1:]):
        if (u, v) not in best:
            return None
        total += best[(u, v)]
    return total


def out_degrees(edges):
    """Node -> number of outgoing edges (str keys, sorted)."""
    deg = {}
    for u, v, _ in edges:
        deg[u] = deg.get(u, 0) + 1
        deg.setdefault(v, 0)
    return {str(k): deg[k] for k in sorted(deg)}
