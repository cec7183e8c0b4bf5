"""Playing the environments: policies, rollouts, evaluation, task validation, results,
plots and the LLM client.

* :mod:`~forgegym.play.policies`: the baseline policies every family gets (``noop``,
  ``random``, ``reference``, ``partial``, ``hack:<name>``, ``baseline:<name>``, ``llm``);
* :mod:`~forgegym.play.rollouts`: rollouts over single and vector envs;
* :mod:`~forgegym.play.evaluation`: ``forgegym eval``'s loop;
* :mod:`~forgegym.play.verify`: ``forgegym tasks verify``'s task validation;
* :mod:`~forgegym.play.results`: the one episode schema (``forgegym.episodes/1``);
* :mod:`~forgegym.play.plots`: ``forgegym plot``;
* :mod:`~forgegym.play.llm`: the chat client behind the ``llm`` policy.

Layer: above ``envs`` and ``curricula``; nothing below imports it.
"""
