"""The real-world corpus holds other projects' test files: data for FlakyRepair, not tests
of forgegym (``tests/envs/flaky/test_corpus.py`` runs them through the env)."""

collect_ignore = ["corpus"]
