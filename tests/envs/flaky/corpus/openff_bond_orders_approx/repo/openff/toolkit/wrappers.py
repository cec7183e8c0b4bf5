import random


def fractional_bond_orders(contributions):
    """Wiberg bond order per bond: the sum of its orbital contributions, accumulated
    in the order the (parallel) backend returns them."""
    orders = []
    for parts in contributions:
        parts = list(parts)
        random.shuffle(parts)
        total = 0.0
        for p in parts:
            total += p
        orders.append(total)
    return orders
