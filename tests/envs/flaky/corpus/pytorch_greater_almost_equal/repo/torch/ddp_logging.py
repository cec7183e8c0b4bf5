import random


def average(values):
    values = list(values)
    random.shuffle(values)  # the order in which the ranks report
    total = 0.0
    for v in values:
        total += v
    return total / len(values)
