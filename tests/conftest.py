"""The suite's markers, applied by where a test lives (see ``docs/testing.md``).

* ``slow``: at or over 7 s in a measured fast-tier run on a shared 2-core machine
  (``--durations=0``; a few seconds alone), or a module whose tests add up to minutes.
  A test may also carry ``@pytest.mark.slow`` itself. ``python -m pytest -m "not slow"``
  is the fast tier.
* ``sandbox``: the test runs sandbox jobs (the confined runners, bubblewrap where
  available): ``-m "not sandbox"`` on a machine without one.
* ``browser``: the test drives Chromium through Playwright.

The lists name paths under ``tests/`` (a folder ends in ``/``) or single tests
(``path::name``, parameters included or not). A listed path that no longer exists
stops the run, so the lists cannot silently go stale when tests move.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: Folders and modules whose tests run sandbox jobs.
SANDBOX: tuple[str, ...] = (
    "cli/",
    "envs/",
    "grading/",
    "bench/test_runner.py",
    "core/test_vector.py",
    "family/test_family.py",
    "integrations/test_example.py",
    "integrations/test_sharded.py",
    "integrations/test_trl.py",
    "integrations/test_warmstart.py",
    "policies/",
    "play/test_evaluation.py",
    "play/test_model_eval.py",
    "play/test_rollouts.py",
    "play/test_telemetry.py",
    "rewards/test_adversarial_corpus.py",
    "sandbox/test_confinement.py",
    "sandbox/test_functional.py",
    "sandbox/test_machine_faults.py",
    "sandbox/test_project_run.py",
    "sandbox/test_ray_runner.py",
    "sandbox/redteam/",
    "sandbox/test_provenance.py",
    "sandbox/test_redteam_confinement.py",
    "sandbox/test_redteam_forgery.py",
    "sandbox/test_runners.py",
    "sandbox/test_security.py",
    "sandbox/test_watch.py",
    "server/test_dashboard.py",
    "server/test_extras.py",
    "server/test_load.py",
    "server/test_protocol.py",
    "tasklib/test_factory.py",
    "test_conformance.py",
    "test_reward_contract.py",
)

#: Modules that drive a browser.
BROWSER: tuple[str, ...] = ("server/test_dashboard.py",)

#: Slow (see the module docstring): modules, folders and single tests.
SLOW: tuple[str, ...] = (
    "bench/test_runner.py",
    "bench/test_throughput.py",
    "cli/test_cli.py",
    "cli/test_serve.py",
    "curricula/test_benchmark.py",
    "envs/bugfix/test_real_bank.py",
    "envs/bugfix/test_repo.py",
    "envs/bugfix/test_repo_project.py",
    "envs/flaky/test_attacks.py",
    "envs/flaky/test_corpus.py",
    "envs/flaky/test_repo.py",
    "envs/flaky/test_repo_dependencies.py",
    "envs/oversight/test_oversight_code.py",
    "envs/oversight/test_oversight_env.py",
    "envs/oversight/test_oversight_worker.py",
    "envs/performance/test_adaptive.py",
    "envs/performance/test_bank.py",
    "envs/performance/test_cpu_accounting.py",
    "envs/performance/test_env.py",
    "envs/bugfix/test_bugfix_rewards.py::test_bugfix_rewards_are_byte_identical_to_the_committed_ones",
    "envs/performance/test_grader.py",
    "envs/performance/test_hacks.py",
    "envs/refactor/test_adequacy.py",
    "envs/refactor/test_corpus.py",
    "envs/refactor/test_offload.py",
    "envs/test_repo_mode_rewards.py::test_repository_mode_rewards_are_byte_identical_to_the_committed_ones",
    "family/test_sixth_family.py::test_conformance_by_id",
    "family/test_sixth_family.py::test_cli_eval_and_list",
    "envs/test_family_rewards.py::test_rewards_are_byte_identical_to_the_committed_ones[flaky]",
    "envs/test_family_rewards.py::test_rewards_are_byte_identical_to_the_committed_ones[performance]",
    "envs/test_family_rewards.py::test_rewards_are_byte_identical_to_the_committed_ones[refactor]",
    "family/test_family.py",
    "grading/test_optimised.py",
    "integrations/test_example.py",
    "integrations/test_sharded.py",
    "integrations/test_trl.py",
    "integrations/test_warmstart.py",
    "policies/test_navigate.py",
    "policies/test_reference_warning.py",
    "play/test_model_eval.py",
    "rewards/test_adversarial_corpus.py",
    "sandbox/test_functional.py",
    "sandbox/test_machine_faults.py",
    "sandbox/test_project_run.py",
    "sandbox/test_ray_runner.py",
    "sandbox/redteam/",
    "sandbox/test_redteam_confinement.py",
    "sandbox/test_redteam_forgery.py",
    "sandbox/test_runners.py",
    "sandbox/test_security.py",
    "sandbox/test_watch.py",
    "server/test_dashboard.py",
    "server/test_load.py",
    "server/test_protocol.py",
    "tasklib/test_factory.py",
    # these grade every family's sample (the module fixture ``graded``, each family on
    # first use: the fast tier's one user, [oversight], grades only its own)
    "test_conformance.py::test_family_solved_predicate_is_the_envs",
    "test_conformance.py::test_identical_rewards_across_fresh_processes",
    "test_conformance.py::test_reference_beats_partial_beats_noop_and_no_hack_beats_noop",
    "test_conformance.py::test_verify_validates_a_task",
    "test_notebook.py",
    "test_reward_contract.py",
    # single tests of a fast-tier candidate run at or over 7 s (that run was on 2 cores
    # shared with other jobs, about 4-7x slower than alone: see docs/testing.md)
    "core/test_vector.py::test_make_vec_returns_real_prompts[Forge/FlakyRepair-v0-async]",
    "core/test_vector.py::test_make_vec_returns_real_prompts[Forge/FlakyRepair-v0-sync]",
    "curricula/test_curriculum.py::test_state_file_plots_with_the_cli",
    "envs/bugfix/test_bugfix.py::test_bench_reports_both_runners",
    "envs/bugfix/test_bugfix.py::test_partial_policy_success_falls_with_difficulty",
    "envs/bugfix/test_bugfix.py::test_same_seed_same_tasks_different_seed_different",
    "envs/bugfix/test_lint_batch.py::test_multi_module_submissions_lint_alike_on_both_paths",
    "envs/flaky/test_flaky.py::test_bench_runs",
    "envs/flaky/test_flaky.py::test_live_revalidation_matches_manifest",
    "envs/flaky/test_flaky.py::test_repo_path_mode",
    "envs/flaky/test_flaky.py::test_reward_ordering_reference_partial_noop_hack",
    "envs/flaky/test_flaky.py::test_wait_inflation_is_gated",
    "envs/oversight/test_oversight_bank.py::test_no_surface_shortcut",
    "envs/refactor/test_env.py::test_bench_reports_both_runners",
    "envs/test_code_env_navigation.py::test_no_observation_exceeds_the_budget",
    "family/test_registration.py::test_make_with_module_prefix_works_without_prior_import",
    "play/test_canaries.py::test_at_least_50_canaries_marked_and_deterministic[performance]",
    "play/test_canaries.py::test_at_least_50_canaries_marked_and_deterministic[refactor]",
    "play/test_canaries.py::test_sampled_canaries_reference_cheat_rate_zero_and_cheat_succeeds[flaky]",
    "play/test_canaries.py::test_sampled_canaries_reference_cheat_rate_zero_and_cheat_succeeds[performance]",
    "play/test_evaluation.py::test_eval_and_rollouts_are_the_same_records[Forge/Bugfix-v0-policies1-sync]",
    "play/test_plots.py::test_plot_curriculum",
    "play/test_plots.py::test_plot_episode_from_rollouts",
    "play/test_plots.py::test_plot_episode_writes_the_format_its_suffix_names",
    "tasklib/test_depenv.py::test_a_local_dependency_installs_once_without_an_index",
    "test_conformance.py::test_check_env[Forge/FlakyRepair-v0]",
    "test_conformance.py::test_check_env[Forge/Performance-v0]",
    "test_conformance.py::test_hidden_data_never_reaches_the_agent[flaky]",
    "test_conformance.py::test_reference_grading_path_gives_the_same_rewards[bugfix]",
    "test_conformance.py::test_reference_grading_path_gives_the_same_rewards[flaky]",
    "test_conformance.py::test_reference_grading_path_gives_the_same_rewards[refactor]",
    "test_conformance.py::test_reset_options_replay_a_task_and_reject_unknown_ones[flaky]",
    "test_conformance.py::test_reward_breakdown_in_info_is_the_model_dumped[flaky]",
    "test_conformance.py::test_step_never_raises_and_errors_reach_the_observation[Forge/Bugfix-v0]",
    "test_conformance.py::test_step_never_raises_and_errors_reach_the_observation[Forge/FlakyRepair-v0]",
    "test_conformance.py::test_step_never_raises_and_errors_reach_the_observation[Forge/Performance-v0]",
    "test_conformance.py::test_step_never_raises_and_errors_reach_the_observation[Forge/Refactor-v0]",
)


def _matches(entry: str, path: str, nodeid: str) -> bool:
    if "::" in entry:
        return nodeid == entry or nodeid.startswith(entry + "[")
    return path.startswith(entry) if entry.endswith("/") else path == entry


def _check_listed_paths() -> None:
    missing = [
        entry
        for entry in (*SANDBOX, *BROWSER, *SLOW)
        if not (TESTS / entry.partition("::")[0]).exists()
    ]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py lists paths that do not exist: {missing}")


def pytest_configure(config: pytest.Config) -> None:
    _check_listed_paths()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            path = item.path.resolve().relative_to(TESTS).as_posix()
        except ValueError:
            continue
        nodeid = path + item.nodeid[item.nodeid.index("::") :] if "::" in item.nodeid else path
        for marker, entries in (("sandbox", SANDBOX), ("browser", BROWSER), ("slow", SLOW)):
            if any(_matches(entry, path, nodeid) for entry in entries):
                item.add_marker(marker)
