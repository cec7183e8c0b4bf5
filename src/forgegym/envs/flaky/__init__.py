"""Forge/FlakyRepair-v0: flaky-test repair with reproducible chaos.

Kept import-light on purpose: the sandbox child imports
``forgegym.envs.flaky.chaos`` as a trusted setup hook, which imports this package.
"""
