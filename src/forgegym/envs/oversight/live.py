"""Episodes from a live LLM worker instead of the scripted bank.

:class:`LiveWorkerBank` is a :class:`~forgegym.core.task.TaskBank` over the text
episodes of the offline bank: for each id it asks the :class:`LLMWorker` to answer the
same case with the same (injected) corruption, and serves the episode only when the
injection demonstrably took effect (:func:`~forgegym.envs.oversight.worker.check_injection`);
the ground-truth span is the statement carrying the injected value. The clean
reference for corrections is the worker's own clean answer to the case. Probes go to
the same conversation, so the worker answers from the belief its system prompt gave
it. Pass ``worker=bank`` to the env as well::

    bank = LiveWorkerBank(LLMWorker.from_openai(url, model))
    env = gym.make("Forge/Oversight-v0", task_bank=bank, worker=bank)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from forgegym.core.task import Task, UnknownTaskError
from forgegym.envs.oversight.bank import OversightBank
from forgegym.envs.oversight.documents import make_case
from forgegym.envs.oversight.episodes import (
    CODE_DOMAIN,
    FAMILY,
    build_text_task,
    hidden_of,
    text_corruption,
)
from forgegym.envs.oversight.worker import LLMWorker

__all__ = ["LiveWorkerBank"]


class LiveWorkerBank:
    """Text episodes answered by a live LLM worker (see the module docstring).

    Args:
        worker: the LLM worker.
        base: the offline bank whose ids (and cases) are reused (default: the shipped one).
        max_tries: ids ``sample`` tries before giving up when injections do not take.
    """

    family = FAMILY
    difficulty_levels: tuple[int, ...] = (1, 2, 3)

    def __init__(
        self, worker: LLMWorker, base: OversightBank | None = None, max_tries: int = 8
    ) -> None:
        self.worker = worker
        self.base = base if base is not None else OversightBank()
        self.max_tries = max_tries
        self._ids = tuple(i for i in self.base.ids() if i.split("/")[1] != CODE_DOMAIN)
        self._tasks: dict[str, Task] = {}
        self.rejected: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def get(self, task_id: str) -> Task:
        if task_id in self._tasks:
            return self._tasks[task_id]
        if task_id not in self._ids:
            raise UnknownTaskError(task_id)
        if task_id in self.rejected:
            raise UnknownTaskError(f"{task_id}: {self.rejected[task_id]}")
        _, domain, index = task_id.split("/")
        case = make_case(domain, int(index))
        corruption = text_corruption(domain, int(index))
        output = self.worker.generate(case, corruption, key=task_id)
        if not output.took_effect or (corruption is not None and output.span is None):
            self.rejected[task_id] = f"injection did not take effect ({output.detail})"
            raise UnknownTaskError(f"{task_id}: {self.rejected[task_id]}")
        clean = output if corruption is None else self.worker.generate(case, None)
        scripted = build_text_task(domain, int(index))
        hidden = hidden_of(scripted).model_copy(
            update={
                "worker_text": output.answer,
                "cot": output.cot,
                "clean": clean.answer,
                "span": output.span,
                "cot_span": None,
            }
        )
        body = scripted.description.split("## Worker's chain of thought", 1)[0]
        task = scripted.model_copy(
            update={
                "description": f"{body}## Worker's chain of thought\n{output.cot}\n\n"
                f"## Worker's answer\n{output.answer}",
                "hidden": hidden.model_dump(mode="json"),
                "metadata": {**scripted.metadata, "worker": "llm"},
            }
        )
        self._tasks[task_id] = task
        return task

    def sample(self, rng: np.random.Generator, difficulty: int | None = None) -> Task:
        pool = [
            i for i in self._ids if difficulty is None or self.base.get(i).difficulty == difficulty
        ]
        for _ in range(self.max_tries):
            task_id = pool[int(rng.integers(0, len(pool)))]
            try:
                return self.get(task_id)
            except UnknownTaskError:
                continue
        raise RuntimeError(
            f"worker: the injection failed on {self.max_tries} episodes in a row; "
            f"last reasons: {list(self.rejected.values())[-3:]}"
        )

    def ids(self, difficulty: int | None = None) -> tuple[str, ...]:
        """The text-domain ids of the base bank (at ``difficulty``): what the live worker
        answers."""
        base = set(self.base.ids(difficulty))
        return tuple(i for i in self._ids if i in base)

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> Sequence[str]:
        ids = [i for i in self.base.task_ids(len(self.base), seed=seed, difficulty=difficulty)]
        return [i for i in ids if i.split("/")[1] != CODE_DOMAIN][: max(0, n)]

    def corruption_of(self, task_id: str) -> str | None:
        return self.base.corruption_of(task_id)

    # the env's Worker protocol: probes continue the worker's conversation
    def answer(self, task: Task, question: str) -> str:
        return self.worker.probe(task.task_id, question)
