"""Playing the environments: rollouts, evaluation, results and the leaderboard, plots.

``play`` is a tool over the registered envs, split by what it is (issue 35):

* rollouts: :mod:`~forgegym.play.rollouts` (single and vector envs);
* evaluation, results and leaderboard: :mod:`~forgegym.play.evaluation` (``forgegym
  eval``'s loop), :mod:`~forgegym.play.model_eval` (``forgegym eval --model``),
  :mod:`~forgegym.play.results` (the one episode schema, ``forgegym.episodes/1``),
  :mod:`~forgegym.play.aggregate` (the protocol's statistics),
  :mod:`~forgegym.play.leaderboard`, :mod:`~forgegym.play.telemetry` (gate and hack
  rates), :mod:`~forgegym.play.canaries` (cheat rates on impossible tasks),
  :mod:`~forgegym.play.fake_openai` (a scripted OpenAI-compatible server for tests and
  demos);
* plots: :mod:`~forgegym.play.plots` (``forgegym plot``).

What lower layers need lives below ``envs``: the baseline policies and task validation
in :mod:`forgegym.policies`, the model clients in :mod:`forgegym.clients`. The old
paths ``forgegym.play.policies``, ``.verify``, ``.client`` and ``.llm`` re-export them.

Layer: above ``envs``; nothing below imports it.
"""
