"""Trainer integrations: TRL (:mod:`.trl`), Unsloth (:mod:`.unsloth`), tiny test models (:mod:`.tiny`).

Submodules are imported on demand so ``import forgegym`` never pulls in torch/TRL.
"""
