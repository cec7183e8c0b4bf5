"""Playing the environments: policies, rollouts, evaluation, task validation, results,
plots, the LLM client and the evaluation protocol.

* :mod:`~forgegym.play.policies`: the baseline policies every family gets (``noop``,
  ``random``, ``reference``, ``partial``, ``hack:<name>``, ``baseline:<name>``, ``llm``);
* :mod:`~forgegym.play.rollouts`: rollouts over single and vector envs;
* :mod:`~forgegym.play.evaluation`: ``forgegym eval``'s loop;
* :mod:`~forgegym.play.verify`: ``forgegym tasks verify``'s task validation;
* :mod:`~forgegym.play.results`: the one episode schema (``forgegym.episodes/1``);
* :mod:`~forgegym.play.plots`: ``forgegym plot``;
* :mod:`~forgegym.play.client`: the asynchronous OpenAI-compatible client (concurrency,
  retries, rate limits, completion cache, accounting); :mod:`~forgegym.play.llm`: its
  synchronous face, behind the ``llm`` policy;
* :mod:`~forgegym.play.model_eval`: ``forgegym eval --model`` (runs, concurrency);
* :mod:`~forgegym.play.aggregate`: the protocol's statistics (pass@k, best/mean of runs,
  difficulty weights, bootstrap intervals, paired differences);
* :mod:`~forgegym.play.leaderboard`: ``forgegym leaderboard`` and the dashboard's tab;
* :mod:`~forgegym.play.fake_openai`: a scripted OpenAI-compatible server for tests and
  demos.

Layer: above ``envs`` and ``curricula``; nothing below imports it.
"""
