"""Topological sorting of dependency maps ``{task: [prerequisites]}``."""


def toposort(deps):
    """Kahn's algorithm, always taking the smallest ready name; raises on a cycle."""
    nodes = set(deps)
    for reqs in deps.values():
        nodes.update(reqs)
    indegree = {n: 0 for n in nodes}
    users = {n: [] for n in nodes}
    for task, reqs in deps.items():
        for req in set(reqs):
            indegree[task] += 1
            users[req].append(task)
    ready = sorted(n for n in nodes if indegree[n] == 0)
    order = []
    while ready:
        node = ready.pop(0)
        order.append(node)
        for user in users[node]:
            indegree[user] -= 1
            if indegree[user] == 0:
                ready.append(user)
                ready.sort()
    if len(order) != len(nodes):
        raise ValueError("cycle detected")
    return order


def has_cycle(deps):
    """Whether the dependency map contains a cycle."""
    try:
        toposort(deps)
    except ValueError:
        return True
    return False


def levels(deps):
    """Node -> length of its longest prerequisite chain (sources are 0)."""
    depth = {}
    for node in toposort(deps):
        reqs = deps.get(node, [])
        depth[node] = 1 + max(depth[r] for r in reqs) if reqs else 0
    return depth
