"""``forgegym eval --model`` throughput against the fake server: concurrency C vs 1.

The fake OpenAI server (:mod:`forgegym.play.fake_openai`) answers the reference after a
fixed latency per answer (a model's time to answer), so the ratio measures how well
the evaluation overlaps requests with each other and with grading. No cache: every
answer is a request. Prints one JSON line per configuration and the ratio.

    python benchmarks/eval_concurrency.py --env Forge/Oversight-v0 --episodes 48 \\
        --latency 0.5 --concurrency 16
"""

from __future__ import annotations

import argparse
import json
import os
import time

from forgegym.clients.async_chat import AsyncChatClient
from forgegym.play.fake_openai import FakeOpenAIServer, create_app, index_tasks
from forgegym.play.model_eval import evaluate_model


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", action="append", default=None)
    parser.add_argument("--episodes", type=int, default=48)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    envs = args.env or ["Forge/Oversight-v0"]
    tasks = index_tasks(envs, episodes=args.episodes, seed=0)
    rates = {}
    with FakeOpenAIServer(create_app(tasks, latency_s=args.latency)) as fake:
        for concurrency in (1, args.concurrency):
            client = AsyncChatClient(model="fake-ref", base_url=fake.url, concurrency=concurrency)
            load = os.getloadavg()[0]
            started = time.perf_counter()
            results = evaluate_model(client, envs, episodes=args.episodes, concurrency=concurrency)
            wall = time.perf_counter() - started
            solved = sum(e.success for e in results.episodes)
            rates[concurrency] = len(results.episodes) / wall
            print(
                json.dumps(
                    {
                        "concurrency": concurrency,
                        "episodes": len(results.episodes),
                        "solved": solved,
                        "wall_s": round(wall, 2),
                        "episodes_per_s": round(rates[concurrency], 3),
                        "requests": results.metadata["usage"]["requests"],
                        "request_seconds": round(results.metadata["usage"]["request_seconds"], 2),
                        "load_1min_before": load,
                    }
                ),
                flush=True,
            )
    print(f"ratio concurrency {args.concurrency} / 1: {rates[args.concurrency] / rates[1]:.2f}")


if __name__ == "__main__":
    main()
