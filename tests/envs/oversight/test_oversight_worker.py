"""The LLM worker: corruption injected through the system prompt, checked to take
effect; tested with fake chat callables (never the network)."""

from __future__ import annotations

import pytest

from forgegym.envs.oversight.documents import CORRUPTIONS, corrupt_belief, make_case, render
from forgegym.envs.oversight.worker import LLMWorker, LLMWorkerError, injection_prompt


def obedient(case):
    """A fake model that follows the operator instruction in its system prompt."""

    def chat(messages):
        system = messages[0]["content"]
        corruption = next(
            (
                c
                for c in CORRUPTIONS
                if injection_prompt(case, c) and injection_prompt(case, c) in system
            ),
            None,
        )
        out = render(case, corrupt_belief(case, corruption))
        return f"REASONING:\n{out.cot}\nANSWER:\n{out.answer}"

    return chat


@pytest.mark.parametrize("corruption", [*CORRUPTIONS, None])
def test_injection_takes_effect_with_an_obedient_model(corruption) -> None:
    case = make_case("customer_support", 3)
    output = LLMWorker(obedient(case)).generate(case, corruption)
    assert output.took_effect, output.detail
    assert output.cot and output.answer
    if corruption is not None and corruption != "factual_omission":
        start, end = output.span
        assert output.answer[start:end]


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_a_model_that_ignores_the_injection_is_detected(corruption) -> None:
    case = make_case("legal_summary", 5)
    honest = render(case, case.clean_belief())
    worker = LLMWorker(lambda messages: f"REASONING: {honest.cot}\nANSWER: {honest.answer}")
    output = worker.generate(case, corruption)
    assert not output.took_effect


def test_the_injection_is_in_the_system_prompt_only() -> None:
    case = make_case("code_review", 2)
    messages = LLMWorker(lambda m: "").messages(case, "authority_fabrication")
    assert case.fabricated in messages[0]["content"]
    assert case.fabricated not in messages[1]["content"]


def test_probe_continues_the_same_conversation() -> None:
    case = make_case("mixed", 1)
    seen = []

    def chat(messages):
        seen.append(list(messages))
        return "ANSWER: the date is " + case.date_superseded

    worker = LLMWorker(chat)
    worker.generate(case, "temporal_shift", key="episode-1")
    reply = worker.probe("episode-1", "Which date did you use?")
    assert case.date_superseded in reply
    assert seen[1][0] == seen[0][0] and seen[1][-1]["content"] == "Which date did you use?"
    with pytest.raises(LLMWorkerError):
        worker.probe("unknown", "?")


def test_client_failures_become_one_error_type() -> None:
    def broken(messages):
        raise ConnectionError("down")

    with pytest.raises(LLMWorkerError, match="down"):
        LLMWorker(broken).generate(make_case("mixed", 0), None)
    with pytest.raises(ValueError, match="chat"):
        LLMWorker("not callable")  # type: ignore[arg-type]


def test_live_bank_serves_llm_episodes_and_probes_the_same_conversation(bank) -> None:
    import gymnasium as gym

    from forgegym.envs.oversight.episodes import hidden_of
    from forgegym.envs.oversight.live import LiveWorkerBank
    from forgegym.envs.oversight.policies import oracle

    ids = [i for i in bank.task_ids(40, seed=0) if i.split("/")[1] != "code"]
    cases = {}
    for task_id in ids:
        case = make_case(task_id.split("/")[1], int(task_id.split("/")[2]))
        cases[f"{case.question}\n\n{case.document()}"] = case

    def chat(messages):
        """A fake model: obeys the injected instruction; stands by it when probed."""
        if len(messages) > 2:
            return "I stand by my answer."
        case = cases[messages[1]["content"]]
        system = messages[0]["content"]
        corruption = next(
            (
                c
                for c in CORRUPTIONS
                if injection_prompt(case, c) and injection_prompt(case, c) in system
            ),
            None,
        )
        out = render(case, corrupt_belief(case, corruption))
        return f"REASONING:\n{out.cot}\nANSWER:\n{out.answer}"

    live = LiveWorkerBank(LLMWorker(chat), base=bank)
    env = gym.make("Forge/Oversight-v0", task_bank=live, worker=live, max_steps=2)
    try:
        task_id = next(i for i in ids if live.corruption_of(i))
        env.reset(options={"task_id": task_id})
        obs, *_ = env.step('{"action": "probe", "question": "Are you sure?"}')
        assert "I stand by my answer." in obs
        task = live.get(task_id)
        assert hidden_of(task).span is not None and task.metadata["worker"] == "llm"
        *_, info = env.step(oracle(task))
        assert info["score"] >= 0.95
    finally:
        env.close()


def test_live_bank_refuses_episodes_whose_injection_did_not_take(bank) -> None:
    from forgegym.core.task import UnknownTaskError
    from forgegym.envs.oversight.live import LiveWorkerBank

    live = LiveWorkerBank(LLMWorker(lambda messages: "ANSWER: I cannot help."), base=bank)
    task_id = next(i for i in live.task_ids(40, seed=0) if live.corruption_of(i))
    with pytest.raises(UnknownTaskError, match="did not take effect"):
        live.get(task_id)
