"""GRPO training on a forgegym environment, in-process, with TRL (or Unsloth on a GPU).

Examples::

    python examples/train_grpo.py --env Forge/Bugfix-v0 --steps 2            # tiny model, CPU
    python examples/train_grpo.py --env Forge/FlakyRepair-v0 --multi-turn
    python examples/train_grpo.py --backend unsloth --model Qwen/Qwen2.5-Coder-1.5B-Instruct

Without ``--model`` a tiny Qwen2 (hidden 16, 2 layers) and an offline tokenizer are
built, so nothing is downloaded. ``--backend unsloth`` loads a 4-bit LoRA model and
needs a CUDA GPU; without one it exits with status 2 and a one-line message.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="GRPO on a forgegym environment")
    parser.add_argument("--env", default="Forge/Bugfix-v0", help="environment id")
    parser.add_argument("--model", default=None, help="model path or hub name (default: tiny)")
    parser.add_argument("--steps", type=int, default=2, help="optimizer steps")
    parser.add_argument("--curriculum", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--multi-turn", action="store_true", help="TRL environment_factory tools")
    parser.add_argument("--backend", choices=("trl", "unsloth"), default="trl")
    parser.add_argument("--num-generations", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--max-completion-length", type=int, default=16)
    parser.add_argument("--max-seq-length", type=int, default=8192, help="unsloth only")
    parser.add_argument("--lora-rank", type=int, default=16, help="unsloth only")
    parser.add_argument("--output-dir", default="outputs/grpo")
    parser.add_argument("--curriculum-state", default=None, help="save the curriculum JSON here")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def load_model(args: argparse.Namespace) -> tuple[Any, Any]:
    if args.backend == "unsloth":
        from forgegym.integrations.unsloth import load_model as unsloth_load

        name = args.model or "unsloth/Qwen2.5-Coder-0.5B-Instruct"
        return unsloth_load(name, args.max_seq_length, args.lora_rank, load_in_4bit=True)
    if args.model is None:
        from forgegym.integrations.tiny import build_tiny_model, build_tiny_tokenizer

        tokenizer = build_tiny_tokenizer()
        return build_tiny_model(tokenizer, seed=args.seed), tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
    return AutoModelForCausalLM.from_pretrained(args.model, dtype="float32"), tokenizer


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from forgegym.integrations.unsloth import UnslothUnavailableError, cuda_available

    if args.backend == "unsloth" and not cuda_available():
        print(
            "error: --backend unsloth needs a CUDA GPU accelerator (torch.cuda.is_available() "
            "is False); use --backend trl",
            file=sys.stderr,
        )
        return 2
    # Plain TRL uses the GPU too when there is one; only Unsloth requires it.
    on_gpu = cuda_available()
    if not on_gpu:
        # TRL's Triton log-prob kernels only run interpreted on a CPU; this must be
        # set before trl is imported.
        os.environ.setdefault("TRITON_INTERPRET", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

    import gymnasium as gym
    from trl import GRPOConfig, GRPOTrainer

    import forgegym  # noqa: F401
    from forgegym.curricula import CurriculumScheduler
    from forgegym.integrations.trl import (
        curriculum_config_overrides,
        make_dataset,
        make_environment_factory,
        make_reward_funcs,
    )

    if ":" in args.env:  # "module:Id", as gym.make accepts: import the registering module
        import importlib

        module, args.env = args.env.split(":", 1)
        importlib.import_module(module)
    try:
        gym.spec(args.env)
    except gym.error.Error as exc:
        print(f"error: unknown environment id {args.env!r} ({exc})", file=sys.stderr)
        return 2
    try:
        model, tokenizer = load_model(args)
    except UnslothUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    scheduler = None
    if args.curriculum:
        probe = gym.make(args.env)
        scheduler = CurriculumScheduler(probe.unwrapped.task_bank, {"seed": args.seed})
        probe.close()
    rows = args.batch_size * args.steps
    dataset = make_dataset(
        args.env, max(rows, 1), curriculum=scheduler, seed=args.seed, multi_turn=args.multi_turn
    )
    config_kwargs: dict[str, Any] = dict(
        output_dir=args.output_dir,
        max_steps=args.steps,
        per_device_train_batch_size=args.batch_size,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=args.seed,
    )
    if not on_gpu:
        config_kwargs.update(use_cpu=True, bf16=False, gradient_checkpointing=False)
    if scheduler is not None:
        config_kwargs.update(curriculum_config_overrides())
    trainer_kwargs: dict[str, Any] = {}
    if args.multi_turn:
        trainer_kwargs["environment_factory"] = make_environment_factory(
            args.env, curriculum=scheduler
        )
    else:
        trainer_kwargs["reward_funcs"] = make_reward_funcs(args.env, curriculum=scheduler)
    trainer = GRPOTrainer(
        model=model,
        args=GRPOConfig(**config_kwargs),
        train_dataset=dataset,
        processing_class=tokenizer,
        **trainer_kwargs,
    )
    trainer.train()
    rewards = [e["reward"] for e in trainer.state.log_history if "reward" in e]
    print(f"trained {trainer.state.global_step} steps on {args.env}; rewards per step: {rewards}")
    if scheduler is not None:
        stats = scheduler.stats()
        print(
            "curriculum:",
            {
                k: stats[k]
                for k in ("episode", "too_easy", "learnable", "too_hard", "current_level")
            },
        )
        if args.curriculum_state:
            print("curriculum state:", scheduler.save(args.curriculum_state))
    return 0


if __name__ == "__main__":
    sys.exit(main())
