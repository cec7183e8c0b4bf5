"""Material several families share: no family imports another, they import this.

* :mod:`~forgegym.tasklib.mutations`: libcst mutation operators (bugs for Bugfix,
  behaviour changes for Refactor's hacks, mutants for FlakyRepair's power check and
  Oversight's corrupted code answers);
* :mod:`~forgegym.tasklib.corpus`: the corpus of reference modules with their checks
  (``data/modules/``) that Bugfix, Refactor and Oversight build tasks from;
* :mod:`~forgegym.tasklib.values`: how a differential check compares two plain values,
  and the sandbox call jobs that produce them;
* :mod:`~forgegym.tasklib.project`, :mod:`~forgegym.tasklib.depenv`,
  :mod:`~forgegym.tasklib.agreement`: a user's repository as it is, its cached test
  dependencies, and the agreement of the sandbox with the host on it;
* :mod:`~forgegym.tasklib.operators`, :mod:`~forgegym.tasklib.inputs`: an independent
  mutation operator set (to measure hidden-check adequacy) and inputs derived from a
  module's own code (boundaries, property-based draws, stateful sequences);
* :mod:`~forgegym.tasklib.literals`: special-casing of the literals a model was shown
  (Bugfix's visible tests and report, FlakyRepair's repository tests).

Layer: above ``grading`` and ``sandbox``; below ``envs``.
"""
