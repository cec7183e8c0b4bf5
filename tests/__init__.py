"""forgegym's tests. A test of ``src/forgegym/<package>/<module>.py`` lives in
``tests/<package>/test_<module>.py``; the only files at this level are the suites that
span every layer or no module (each says why in its docstring): the environment
conformance suite, the reward contract, the layering rules and the example notebook.
Shared test material lives in ``tests/fixtures/``."""
