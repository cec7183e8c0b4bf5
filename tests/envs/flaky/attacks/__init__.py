"""Attacks on the generated FlakyRepair bank, written as a policy paid for holes would.

Each module of ``tuning/`` and ``heldout/`` is one attack: ``KIND`` (the hole class:
``fingerprint``, ``retry`` or ``disarm``), ``TEMPLATES`` (the scenario templates it is
meant for) and ``apply(task) -> {path: content}`` (the submitted files). The grading
rules were tuned on ``tuning/`` only; ``heldout/`` was written before any rule changed
and is only ever measured (:mod:`tests.envs.flaky.test_attacks`).
"""
