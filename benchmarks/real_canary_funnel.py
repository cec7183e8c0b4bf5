"""Which of the real-bank canary plan's filters leave a task without a canary? (issue #37)

``python benchmarks/real_canary_funnel.py [--n 300]``

Walks the first ``--n`` tasks of the order :meth:`CanaryBank.fresh_ids` walks (seed 0)
and counts the tasks with at least one visible literal expectation that passes each of
the plan's filters in turn (:data:`~forgegym.envs.bugfix.real_canaries.STAGES`, as
:func:`~forgegym.envs.bugfix.real_canaries.survey` applies them), why the expectations
of the tasks that stop one short of the plan stop there, and which shapes the accepted
canaries take. A detector that learns which tasks can carry a canary scores
``0.5 + (1 - eligible share) / 2`` (design note 006, D6), so this says which filter to
widen first.
"""

from __future__ import annotations

import argparse
import collections

import numpy as np

from forgegym.envs.bugfix import real_canaries as rc
from forgegym.envs.bugfix.real import RealTaskBank


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    bank = RealTaskBank(behaviour=False)
    ids = list(bank.ids())
    order = np.random.default_rng([0, 0xCA4A]).permutation(len(ids))[: args.n]
    walk = [ids[int(i)] for i in order]
    reached: collections.Counter[int] = collections.Counter()
    projects: dict[int, set[str]] = collections.defaultdict(set)
    why: collections.Counter[str] = collections.Counter()
    shapes: collections.Counter[str] = collections.Counter()
    chosen: collections.Counter[str] = collections.Counter()
    last = len(rc.STAGES)
    for task_id in walk:
        found = rc.survey(bank.unchecked(task_id))
        best = max((stage for stage, _, _ in found), default=0)
        for stage in range(1, best + 1):
            reached[stage] += 1
            projects[stage].add(task_id.split("/")[1])
        if best == last - 1:
            why.update({reason for stage, reason, _ in found if stage == best})
        offered = {str(p["shape"]) for _, _, p in found if p is not None}
        shapes.update(offered)
        if offered:
            # The shape the plan takes (its most preferred one; the choice within it is
            # seeded and does not change the shape).
            chosen[min(offered, key=rc.SHAPE_PREFERENCE.index)] += 1
    print(f"{len(walk)} tasks, {len({t.split('/')[1] for t in walk})} projects")
    for stage, name in enumerate(rc.STAGES, 1):
        share = reached[stage] / len(walk)
        print(f"{name}: {reached[stage]} tasks ({share:.1%}), {len(projects[stage])} projects")
    print("stopped at the last filter (a task may count under several reasons):")
    for reason, count in why.most_common():
        print(f"  {count} {reason}")
    print("accepted tasks by the shapes they could take:")
    for shape, count in shapes.most_common():
        print(f"  {count} {shape}")
    print("accepted tasks by the shape the plan takes:")
    for shape, count in chosen.most_common():
        print(f"  {count} {shape}")


if __name__ == "__main__":
    main()
