"""examples/train_grpo.py: the unsloth backend refuses without a GPU; trl trains."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import forgegym

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "examples" / "train_grpo.py"


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(_cuda(), reason="checks the no-GPU message")
def test_unsloth_backend_without_gpu_exits_with_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--backend", "unsloth"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "CUDA GPU" in lines[0] and "accelerator" in lines[0]


@pytest.fixture(scope="module")
def trl_backend_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Any]]:
    """The TRL backend's 2-step run of the script, a fresh process started here; the
    function it yields waits for it (``(returncode, stdout, stderr, curriculum state
    path)``). ``test_default_flags_give_grpo_a_signal_in_the_first_steps`` asks for it
    first, so the run uses the second core while that in-process test trains on one
    (both on one torch thread); ``test_trl_backend_trains`` reads the result."""
    forgegym.register_envs()
    env_id = "Forge/Bugfix-v0"
    try:
        probe = gym.make(env_id)
        probe.unwrapped.task_bank.task_ids(1, seed=0)
        probe.close()
    except Exception:  # noqa: BLE001 - until the family serves tasks, use the toy family
        env_id = "toy_forge:ForgeTest/Toy-v0"
    tmp_path = tmp_path_factory.mktemp("trl_backend")
    state = tmp_path / "curriculum.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(SCRIPT),
            "--backend",
            "trl",
            "--env",
            env_id,
            "--steps",
            "2",
            "--warm-start",
            "none",
            "--output-dir",
            str(tmp_path / "out"),
            "--curriculum-state",
            str(state),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "TRITON_INTERPRET": "1",
            # One torch (OpenMP) thread: it runs beside an in-process training, and
            # spin-waiting threads on oversubscribed cores slow a tiny model >10x.
            "OMP_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join(
                [str(ROOT / "tests" / "curricula"), os.environ.get("PYTHONPATH", "")]
            ),
        },
    )

    def finished() -> tuple[int, str, str, Path]:
        stdout, stderr = proc.communicate(timeout=600)
        return proc.returncode, stdout, stderr, state

    try:
        yield finished
    finally:
        if proc.poll() is None:  # not awaited (its test deselected): not left running
            proc.kill()
            proc.communicate()


def _example_module() -> Any:
    spec = importlib.util.spec_from_file_location("train_grpo_example", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_backends_fix_the_same_grpo_settings_from_the_same_flags() -> None:
    example = _example_module()
    flags = [
        "--learning-rate",
        "3e-6",
        "--beta",
        "0.04",
        "--loss-type",
        "grpo",
        "--gradient-accumulation-steps",
        "4",
        "--steps",
        "7",
    ]
    trl_kwargs = example.grpo_config_kwargs(example.parse_args([*flags, "--backend", "trl"]), True)
    unsloth_kwargs = example.grpo_config_kwargs(
        example.parse_args([*flags, "--backend", "unsloth"]), True
    )
    assert trl_kwargs == unsloth_kwargs
    # every setting Unsloth's GRPOConfig would otherwise default differently is explicit
    for name in ("learning_rate", "beta", "loss_type", "gradient_accumulation_steps"):
        assert name in trl_kwargs
    assert trl_kwargs["learning_rate"] == 3e-6 and trl_kwargs["gradient_accumulation_steps"] == 4
    assert set(example.EFFECTIVE_FIELDS) <= set(trl_kwargs)


def test_bad_flags_exit_with_a_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--steps", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    assert "--steps" in proc.stderr and "Traceback" not in proc.stderr


def _effective_line(out: str) -> dict[str, Any]:
    (line,) = [x for x in out.splitlines() if x.startswith("effective config:")]
    return json.loads(line.split(":", 1)[1])


@pytest.fixture
def unsloth_mocked(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """A stand-in for Unsloth on a GPU: importing it swaps TRL's ``GRPOConfig`` for one
    with Unsloth's own defaults (as the real package does), and its loader returns the
    tiny model. Returns the configs built while it is installed."""
    import dataclasses

    import trl

    from forgegym.integrations import unsloth as support
    from forgegym.integrations.tiny import build_tiny_model, build_tiny_tokenizer

    built: list[Any] = []

    @dataclasses.dataclass
    class UnslothLikeGRPOConfig(trl.GRPOConfig):  # type: ignore[misc]
        learning_rate: float = 5e-5
        beta: float = 0.001
        loss_type: str = "bnpo"
        gradient_accumulation_steps: int = 2
        temperature: float = 0.9
        max_completion_length: int = 1024
        max_steps: int = 100

        def __post_init__(self) -> None:
            super().__post_init__()
            built.append(self)

    # the stand-in must differ from every setting the flags fix, or the test proves nothing
    defaults = UnslothLikeGRPOConfig(output_dir="unused", use_cpu=True, bf16=False)
    built.clear()
    example = _example_module()
    plain = example.grpo_config_kwargs(example.parse_args([]), on_gpu=False)
    for name in ("learning_rate", "beta", "loss_type", "gradient_accumulation_steps"):
        assert getattr(defaults, name) != plain[name], name

    def import_first() -> None:
        monkeypatch.setattr(trl, "GRPOConfig", UnslothLikeGRPOConfig)

    def load(name: str, max_seq_length: int, lora_rank: int, load_in_4bit: bool = True):
        tokenizer = build_tiny_tokenizer()
        return build_tiny_model(tokenizer), tokenizer

    monkeypatch.setattr(support, "cuda_available", lambda: True)
    monkeypatch.setattr(support, "import_unsloth_first", import_first)
    monkeypatch.setattr(support, "load_model", load)
    return built


def test_printed_effective_config_is_the_same_on_both_backends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unsloth_mocked: list[Any]
) -> None:
    """Same flags -> the same effective config line, although Unsloth's config class
    has other defaults for every setting the flags fix."""
    example = _example_module()
    flags = ["--env", "Forge/Bugfix-v0", "--output-dir", str(tmp_path), "--print-config"]
    flags += ["--learning-rate", "2e-6", "--steps", "3", "--num-generations", "2"]
    assert example.main([*flags, "--backend", "trl"]) == 0
    trl_effective = _effective_line(capsys.readouterr().out)
    assert not unsloth_mocked  # the TRL run used TRL's own config
    assert example.main([*flags, "--backend", "unsloth"]) == 0
    unsloth_effective = _effective_line(capsys.readouterr().out)
    assert unsloth_mocked  # ... and the Unsloth run Unsloth's
    assert trl_effective.pop("backend") == "trl"
    assert unsloth_effective.pop("backend") == "unsloth"
    assert unsloth_effective == trl_effective
    assert set(trl_effective) == set(example.EFFECTIVE_FIELDS)
    assert trl_effective["learning_rate"] == 2e-6 and trl_effective["max_steps"] == 3
    assert trl_effective["gradient_accumulation_steps"] == 1 and trl_effective["beta"] == 0.0


def test_a_backend_that_overrides_a_flag_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    unsloth_mocked: list[Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Unsloth rewrites some values even when they are passed (e.g. the batch size when
    it is not a multiple of the group size): the script refuses to train then."""
    import trl

    from forgegym.integrations import unsloth as support

    example = _example_module()
    install = support.import_unsloth_first

    def import_first() -> None:
        install()
        patched = trl.GRPOConfig

        class Rewriting(patched):  # type: ignore[misc, valid-type]
            def __post_init__(self) -> None:
                # a multiple of the group size, never the flag's own value
                self.per_device_train_batch_size += 2
                super().__post_init__()

        monkeypatch.setattr(trl, "GRPOConfig", Rewriting)

    monkeypatch.setattr(support, "import_unsloth_first", import_first)
    flags = ["--env", "Forge/Bugfix-v0", "--output-dir", str(tmp_path), "--print-config"]
    assert example.main([*flags, "--backend", "unsloth", "--num-generations", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "changed settings" in err and "per_device_train_batch_size" in err
    assert len(err.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.timeout(1800)  # ~1 min of CPU; wall time is whatever the shared machine gives
def test_default_flags_give_grpo_a_signal_in_the_first_steps(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    one_thread: None,
    trl_backend_run: Callable[[], Any],  # started now: it runs beside this test
) -> None:
    """The README's command with default flags (tiny model, SFT warm start, GRPO on the
    warm-start tasks) has reward variance and a gradient within 2 GRPO steps."""
    import re
    import warnings

    from forgegym.integrations.nosignal import NoSignalWarning

    example = _example_module()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = example.main(["--steps", "2", "--output-dir", str(tmp_path / "out")])
    out = capsys.readouterr().out
    print(out)  # shown with -s: the numbers behind the assertions
    assert code == 0
    assert "sft warm start:" in out and "trained 2 steps" in out
    match = re.search(r"reward std per step: (\[.*?\]); grad norm per step: (\[.*?\])", out)
    assert match is not None, out
    stds, norms = json.loads(match[1]), json.loads(match[2])
    assert len(stds) == 2 and len(norms) == 2
    assert any(s > 0 for s in stds), out
    assert any(n > 0 for n in norms), out
    no_signal = [w for w in caught if issubclass(w.category, NoSignalWarning)]
    assert len(no_signal) < 2, [str(w.message) for w in no_signal]


@pytest.mark.slow
def test_trl_backend_trains(trl_backend_run: Callable[[], tuple[int, str, str, Path]]) -> None:
    returncode, stdout, stderr, state = trl_backend_run()
    assert returncode == 0, stderr[-3000:]
    assert "trained 2 steps" in stdout
    assert state.exists()
    # the effective config is printed once, read back from the trainer, equal to the flags
    (line,) = [x for x in stdout.splitlines() if x.startswith("effective config:")]
    effective = json.loads(line.split(":", 1)[1])
    assert effective["backend"] == "trl"
    assert effective["learning_rate"] == 1e-4 and effective["beta"] == 0.0
    assert effective["loss_type"] == "dapo" and effective["gradient_accumulation_steps"] == 1
    # a randomly initialised model gives GRPO no signal: the script says so
    assert "only checks the plumbing" in stdout
