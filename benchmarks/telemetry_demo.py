"""Demo telemetry: batches of real Bugfix gradings where the share of hack completions grows."""

import sys
from types import SimpleNamespace

import gymnasium as gym

import forgegym  # noqa: F401
from forgegym.integrations.trl import make_reward_funcs, telemetry_callback
from forgegym.policies import NOOP_ACTION
from forgegym.policies.registry import hacks_for, reference_action_for

env = gym.make("Forge/Bugfix-v0", max_steps=1).unwrapped
tids = env.task_bank.task_ids(6, seed=5)
tasks = [env.task_bank.get(t) for t in tids]
env.close()
hacks = list(hacks_for("bugfix").values())
ref = reference_action_for("bugfix")
(reward,) = make_reward_funcs("Forge/Bugfix-v0", env_kwargs={"max_steps": 1})
cb = telemetry_callback(sys.argv[1] if len(sys.argv) > 1 else "telemetry.jsonl")
for step, task in enumerate(tasks, 1):
    n_hack = step  # 1..6 of 8 completions cheat
    comps = [hacks[(step + i) % len(hacks)](task) for i in range(n_hack)]
    comps += [ref(task), NOOP_ACTION, "no json here"][: 8 - n_hack]
    comps += [ref(task)] * (8 - len(comps))
    logged = {}
    reward(
        prompts=[[]] * 8,
        completions=comps,
        task_id=[task.task_id] * 8,
        log_metric=logged.__setitem__,
    )
    cb.on_log(
        None, SimpleNamespace(global_step=step, is_world_process_zero=True), None, logs=logged
    )
    print(step, {k: round(v, 3) for k, v in logged.items() if k.startswith("forgegym/")})
