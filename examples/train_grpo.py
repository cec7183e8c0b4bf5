"""GRPO training on a forgegym environment, in-process, with TRL (or Unsloth on a GPU).

Examples::

    python examples/train_grpo.py --env Forge/Bugfix-v0 --steps 4            # tiny model, CPU
    python examples/train_grpo.py --env Forge/Bugfix-v0 --warm-start none    # plumbing only
    python examples/train_grpo.py --env Forge/FlakyRepair-v0 --multi-turn
    python examples/train_grpo.py --backend unsloth --model unsloth/Qwen2.5-Coder-1.5B-Instruct

Without ``--model`` a tiny Qwen2 and an offline tokenizer are built, so nothing is
downloaded. A randomly initialised model never writes a valid action, so every
completion of a group scores the same and GRPO has no signal (loss 0, grad_norm 0).
The defaults are therefore the recipe of the learning check (docs/training.md):
``--warm-start sft`` (the default) first fine-tunes the model with TRL's
``SFTTrainer`` on 4 tasks' reference trajectories (single-turn actions, or tool calls
with ``--multi-turn``) for 40 epochs at 3e-3, then runs GRPO from that checkpoint on
those tasks (1e-4, 8 completions per step in groups of 4, 96 new tokens, temperature
0.7, beta 0, ``dapo``), where the rewards of a group differ from the first step on. It
works with any local or hub model path too; ``--warm-start none`` skips it (with the
tiny model, a smoke test of the plumbing only). Every logged step with zero reward
variance or a zero gradient norm is warned about
(:class:`forgegym.integrations.nosignal.NoSignalCallback`).

Backends (both mean the same thing by the same flags):

- ``--backend trl``: plain TRL; uses a GPU when there is one, else the CPU.
- ``--backend unsloth``: Unsloth's 4-bit LoRA loader and its patched trainer. Needs a
  CUDA GPU: without one it exits with status 2 and a one-line message (Unsloth itself
  would fall back to a slow CPU mode). Unsloth is imported before trl, transformers
  and peft, as it requires, and every setting its GRPO config would otherwise change
  (learning rate, beta, loss type, gradient accumulation) is set from these flags.

The effective config is printed at start as one ``effective config:`` JSON line, read
back from the trainer, so a run on either backend shows what it really uses; the run
stops with status 2 if the trainer changed any setting the flags fixed.
``--print-config`` prints it and exits without training.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

#: GRPOConfig fields that define the optimisation; printed and checked on both backends.
EFFECTIVE_FIELDS = (
    "learning_rate",
    "beta",
    "loss_type",
    "gradient_accumulation_steps",
    "per_device_train_batch_size",
    "num_generations",
    "max_completion_length",
    "max_steps",
    "temperature",
    "seed",
)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each flag's default once: a help text that already says its default (in
    words, for a ``None`` that means something) is left as it is."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "(default:" in text:
            return text
        return super()._get_help_string(action)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="GRPO on a forgegym environment",
        formatter_class=_DefaultsFormatter,
    )
    parser.add_argument("--env", default="Forge/Bugfix-v0", help="environment id")
    parser.add_argument(
        "--model",
        default=None,
        help="model path or hub name (default: a tiny offline Qwen2 built from a config)",
    )
    parser.add_argument("--steps", type=_positive_int, default=2, help="GRPO optimizer steps")
    parser.add_argument(
        "--curriculum",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="draw GRPO tasks from the pass@k curriculum (default: on with --warm-start "
        "none; with a warm start GRPO cycles the warm-start tasks, where a small model's "
        "rewards differ within a group)",
    )
    parser.add_argument("--multi-turn", action="store_true", help="TRL environment_factory tools")
    parser.add_argument("--backend", choices=("trl", "unsloth"), default="trl")
    parser.add_argument(
        "--num-generations", type=_positive_int, default=4, help="completions per prompt"
    )
    parser.add_argument(
        "--batch-size", type=_positive_int, default=8, help="completions per device step"
    )
    parser.add_argument(
        "--max-completion-length",
        type=_positive_int,
        default=96,
        help="new tokens per completion (a warm-started tiny model's actions need ~30-60)",
    )
    parser.add_argument("--learning-rate", type=float, default=1e-4, help="GRPO learning rate")
    parser.add_argument("--beta", type=float, default=0.0, help="KL coefficient")
    parser.add_argument(
        "--loss-type", default="dapo", help="GRPO loss (grpo, dr_grpo, dapo, bnpo, ...)"
    )
    parser.add_argument("--gradient-accumulation-steps", type=_positive_int, default=1)
    parser.add_argument("--temperature", type=float, default=0.7, help="sampling temperature")
    parser.add_argument(
        "--warm-start",
        choices=("none", "sft"),
        default="sft",
        help="supervised fine-tuning on the reference policy's trajectories before GRPO",
    )
    parser.add_argument("--sft-tasks", type=_positive_int, default=4, help="warm-start tasks")
    parser.add_argument("--sft-epochs", type=float, default=40.0, help="warm-start epochs")
    parser.add_argument("--sft-learning-rate", type=float, default=3e-3)
    parser.add_argument("--sft-batch-size", type=_positive_int, default=2)
    parser.add_argument("--tiny-hidden", type=_positive_int, default=16, help="tiny model width")
    parser.add_argument("--max-seq-length", type=_positive_int, default=8192, help="unsloth only")
    parser.add_argument("--lora-rank", type=_positive_int, default=16, help="unsloth only")
    parser.add_argument("--output-dir", default="outputs/grpo")
    parser.add_argument(
        "--telemetry",
        default=None,
        help="append the forgegym/* telemetry of every logging step to this JSON-lines "
        "file, for `forgegym plot telemetry` (default: OUTPUT_DIR/telemetry.jsonl)",
    )
    parser.add_argument(
        "--curriculum-state",
        default=None,
        help="save the curriculum JSON here (default: not saved)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="build the trainer, print the effective config and exit without training",
    )
    args = parser.parse_args(argv)
    if args.curriculum is None:
        args.curriculum = args.warm_start == "none"
    return args


def load_model(
    args: argparse.Namespace, texts: tuple[list[str], list[str]] | None = None
) -> tuple[Any, Any]:
    """The model and tokenizer; ``texts`` (a warm start's corpus and action texts) fit
    the tiny tokenizer to the data and its action protocol."""
    if args.backend == "unsloth":
        from forgegym.integrations.unsloth import load_model as unsloth_load

        name = args.model or "unsloth/Qwen2.5-Coder-0.5B-Instruct"
        return unsloth_load(name, args.max_seq_length, args.lora_rank, load_in_4bit=True)
    if args.model is None:
        from forgegym.integrations.tiny import build_tiny_model, build_tiny_tokenizer

        if texts:  # a warm start: a tokenizer and a model big enough to learn the data
            tokenizer = build_tiny_tokenizer(1024, *texts)
            hidden = max(args.tiny_hidden, 128)
            return build_tiny_model(tokenizer, hidden_size=hidden, num_heads=4, seed=args.seed), (
                tokenizer
            )
        tokenizer = build_tiny_tokenizer()
        return build_tiny_model(tokenizer, hidden_size=args.tiny_hidden, seed=args.seed), tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
    return AutoModelForCausalLM.from_pretrained(args.model, dtype="float32"), tokenizer


def grpo_config_kwargs(args: argparse.Namespace, on_gpu: bool) -> dict[str, Any]:
    """Every GRPOConfig setting this script fixes, from the flags (both backends)."""
    kwargs: dict[str, Any] = dict(
        output_dir=args.output_dir,
        max_steps=args.steps,
        per_device_train_batch_size=args.batch_size,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        learning_rate=args.learning_rate,
        beta=args.beta,
        loss_type=args.loss_type,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        temperature=args.temperature,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=args.seed,
    )
    if not on_gpu:
        kwargs.update(use_cpu=True, bf16=False, gradient_checkpointing=False)
    return kwargs


def effective_config(trainer_args: Any) -> dict[str, Any]:
    """The settings the trainer really uses (read back, after any backend patching)."""
    return {name: getattr(trainer_args, name, None) for name in EFFECTIVE_FIELDS}


class _Refused(Exception):
    """A one-line reason to exit with status 2."""


def _use_backend(args: argparse.Namespace) -> bool:
    """Check and import the backend; returns whether training runs on a GPU.

    With ``--backend unsloth`` Unsloth is imported here, before anything imports trl,
    transformers or peft. Raises :class:`_Refused` with a one-line message without a
    GPU or without the package.
    """
    from forgegym.integrations import unsloth as unsloth_support

    if args.backend == "unsloth":
        if not unsloth_support.cuda_available():
            raise _Refused(
                "--backend unsloth needs a CUDA GPU accelerator (torch.cuda.is_available() "
                "is False); use --backend trl"
            )
        try:  # before trl, transformers and peft, as Unsloth requires
            unsloth_support.import_unsloth_first()
        except unsloth_support.UnslothUnavailableError as exc:
            raise _Refused(str(exc)) from None
    import torch

    # Plain TRL uses the GPU too when there is one; only Unsloth requires it.
    on_gpu = bool(torch.cuda.is_available())
    if not on_gpu:
        # TRL's Triton log-prob kernels only run interpreted on a CPU; this must be
        # set before trl is imported.
        os.environ.setdefault("TRITON_INTERPRET", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    return on_gpu


def telemetry_path(args: argparse.Namespace) -> str:
    """Where the telemetry callback appends its rows (its folder created)."""
    path = args.telemetry or os.path.join(args.output_dir, "telemetry.jsonl")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return str(path)


def build_trainer(args: argparse.Namespace, on_gpu: bool) -> tuple[Any, dict[str, Any], Any]:
    """The GRPO trainer for ``args`` (after the warm start, when asked for).

    Returns ``(trainer, config_kwargs, scheduler)``: the kwargs this script gave
    ``GRPOConfig`` and the curriculum scheduler (or None). Raises :class:`_Refused` for
    an unknown environment id or an unusable backend.
    """
    import gymnasium as gym
    from trl import GRPOConfig, GRPOTrainer

    import forgegym  # noqa: F401
    from forgegym.integrations.nosignal import NoSignalCallback
    from forgegym.integrations.unsloth import UnslothUnavailableError

    if not on_gpu:  # TRL's Triton LM-head kernel would run interpreted, >100x slower
        from forgegym.integrations.cpu_kernels import install_cpu_lm_head

        install_cpu_lm_head()
    from forgegym.curricula import CurriculumScheduler
    from forgegym.integrations.trl import (
        curriculum_config_overrides,
        make_dataset,
        make_environment_factory,
        make_reward_funcs,
        telemetry_callback,
    )

    if ":" in args.env:  # "module:Id", as gym.make accepts: import the registering module
        import importlib

        module, args.env = args.env.split(":", 1)
        importlib.import_module(module)
    try:
        gym.spec(args.env)
    except gym.error.Error as exc:
        raise _Refused(f"unknown environment id {args.env!r} ({exc})") from None

    sft_data = None
    texts: tuple[list[str], list[str]] | None = None
    if args.warm_start == "sft" and not args.print_config:  # the config does not depend on it
        from forgegym.integrations.warmstart import reference_sft_dataset, tokenizer_texts

        # Tasks after the GRPO rows' seed, so GRPO's first rows are not memorised.
        sft_data = reference_sft_dataset(
            args.env, args.sft_tasks, seed=args.seed + 1, multi_turn=args.multi_turn
        )
        texts = tokenizer_texts(sft_data)
    try:
        model, tokenizer = load_model(args, texts)
    except UnslothUnavailableError as exc:
        raise _Refused(str(exc)) from None
    if sft_data is not None:
        from forgegym.integrations.warmstart import sft_warm_start

        model, history = sft_warm_start(
            model,
            tokenizer,
            sft_data,
            output_dir=os.path.join(args.output_dir, "sft"),
            epochs=args.sft_epochs,
            learning_rate=args.sft_learning_rate,
            batch_size=args.sft_batch_size,
            seed=args.seed,
            use_cpu=not on_gpu,
        )
        losses = [round(e["loss"], 4) for e in history if "loss" in e]
        print(f"sft warm start: {len(sft_data)} trajectories, loss {losses[0]} -> {losses[-1]}")

    scheduler = None
    if args.curriculum:
        probe = gym.make(args.env)
        scheduler = CurriculumScheduler(probe.unwrapped.task_bank, {"seed": args.seed})
        probe.close()
    rows = args.batch_size * args.steps * args.gradient_accumulation_steps
    if sft_data is not None and scheduler is None:
        # GRPO on the warm-start tasks (the learning check's recipe): a small model
        # trained from scratch has reward variance there, not on unseen tasks yet.
        import datasets

        kept = set(sft_data["task_id"])
        warm_rows = [
            row
            for row in make_dataset(
                args.env, args.sft_tasks, seed=args.seed + 1, multi_turn=args.multi_turn
            )
            if row["task_id"] in kept
        ]
        if not warm_rows:
            raise _Refused(f"the warm start kept no {args.env} task to train GRPO on")
        dataset = datasets.Dataset.from_list(warm_rows * -(-rows // len(warm_rows)))
    else:
        dataset = make_dataset(
            args.env,
            max(rows, 1),
            curriculum=scheduler,
            seed=args.seed,
            multi_turn=args.multi_turn,
        )
    config_kwargs = grpo_config_kwargs(args, on_gpu)
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
        callbacks=[NoSignalCallback(), telemetry_callback(telemetry_path(args))],
        **trainer_kwargs,
    )
    return trainer, config_kwargs, scheduler


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        on_gpu = _use_backend(args)
        trainer, config_kwargs, scheduler = build_trainer(args, on_gpu)
    except _Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    effective = effective_config(trainer.args)
    print("effective config:", json.dumps({"backend": args.backend, **effective}, sort_keys=True))
    changed = {
        k: (config_kwargs[k], v)
        for k, v in effective.items()
        if k in config_kwargs and v != config_kwargs[k]
    }
    if changed:
        print(f"error: the {args.backend} trainer changed settings: {changed}", file=sys.stderr)
        return 2
    if args.print_config:
        return 0
    trainer.train()
    history = trainer.state.log_history
    rewards = [e["reward"] for e in history if "reward" in e]
    print(f"trained {trainer.state.global_step} steps on {args.env}; rewards per step: {rewards}")
    stds = [e.get("reward_std", 0.0) for e in history if "reward" in e]
    norms = [e.get("grad_norm", 0.0) for e in history if "grad_norm" in e]
    print(f"reward std per step: {stds}; grad norm per step: {norms}")
    if args.multi_turn:
        calls = [e.get("tools/call_frequency", 0.0) for e in history if "reward" in e]
        print(f"tool calls per completion per step: {calls}")
    if args.warm_start == "none" and args.model is None and not any(norms):
        print(
            "note: a randomly initialised model writes no valid action, so GRPO had no "
            "signal (grad norm 0): this run only checks the plumbing; use --warm-start sft"
        )
    print(
        f"telemetry: {telemetry_path(args)} "
        f"(forgegym plot telemetry {telemetry_path(args)} -o telemetry.png)"
    )
    if scheduler is not None:
        stats = scheduler.stats()
        print(
            "curriculum:",
            {
                k: stats[k]
                for k in ("episode", "too_easy", "learnable", "too_hard", "current_level")
                if k in stats
            },
        )
        if args.curriculum_state:
            print("curriculum state:", scheduler.save(args.curriculum_state))
    return 0


if __name__ == "__main__":
    sys.exit(main())
