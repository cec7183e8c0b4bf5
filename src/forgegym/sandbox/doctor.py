"""``forgegym doctor``: which isolation features a job really gets on this machine.

Runs :mod:`forgegym.sandbox.selftest` as an ordinary job on a fork-server runner and
reads back what it saw, beside the host probes of :func:`isolation.probe`. Kept apart
from :mod:`.confinement` (which the runners import) so that the confinement layer does
not import a runner back.
"""

from __future__ import annotations

import os
from typing import cast

from forgegym.sandbox import confinement, isolation
from forgegym.sandbox.jobs import CallJob, CallSpec, RunStatus, pristine_manifest
from forgegym.sandbox.runners.forkserver import ForkServerRunner

__all__ = ["doctor_report"]


def _host_ns() -> dict[str, str]:
    out = {}
    for ns in ("user", "mnt", "ipc", "pid", "net", "uts"):
        try:
            out[ns] = os.readlink(f"/proc/self/ns/{ns}")
        except OSError:
            out[ns] = "?"
    return out


def _trusted_code_row() -> isolation.IsolationFeature:
    """What the runtime policy trusts (docs/design/004): decided by the parent, shown so a
    user knows why a project's own introspection runs and the agent's does not."""
    runtime = ", ".join(
        sorted(
            {
                os.path.basename(p).removesuffix(".py")
                for p in confinement.harness_package_paths()
                if not p.endswith(".dist-info")
            }
        )
    )
    return isolation.IsolationFeature(
        "trusted_code",
        True,
        "the standard library, the harness's packages ("
        + runtime
        + "), the project's dependency environment and the task's pristine files (by "
        "sha256 of what is compiled); changed or added files and text they compile are "
        "untrusted: no frames for them, only fresh processes that inherit nothing, and "
        "text compiled only into code as untrusted as theirs; verdicts composed in the "
        "signer's ledger",
    )


def doctor_report() -> list[isolation.IsolationFeature]:
    """What a job really gets on this machine: runs :mod:`forgegym.sandbox.selftest` as
    an ordinary job on a fork-server runner and reads back what it saw, plus the host
    probes of ``isolation.probe()`` (rlimits, cgroup, fork server)."""
    Feature = isolation.IsolationFeature
    status = confinement.confinement_status()
    rows: list[isolation.IsolationFeature] = []
    if status.active:
        rows.append(Feature("bubblewrap", True, f"{status.bwrap}: one minimal root per zygote"))
    else:
        rows.append(Feature("bubblewrap", False, status.describe()))
    host = _host_ns()
    seen, why = _run_probe_job()
    if seen is None:
        rows.append(Feature("probe_job", False, f"the probe job failed: {why[:300]}"))
        rows += isolation.probe()
        return rows
    ns = seen.get("namespaces") or {}
    assert isinstance(ns, dict)
    # The namespaces the job has of its own (not the host's).
    owned = {name for name, link in ns.items() if link and link != host.get(name)}
    host_paths = seen.get("host_paths") or {}
    assert isinstance(host_paths, dict)
    rows += _privilege_rows(seen, owned)
    rows += _namespace_rows(seen, owned, host_paths)
    rows += _filter_rows(seen, host_paths)
    rows.append(_trusted_code_row())
    rows += _job_rows(seen)
    names = {r.name for r in rows}
    for feat in isolation.probe():
        if feat.name not in names:
            rows.append(feat)
    return rows


def _run_probe_job() -> tuple[dict[str, object] | None, str]:
    """Run the selftest as an ordinary job: ``(what it saw, "")``, or ``(None, why not)``.
    It is handed a 0600 host file and a file of forgegym's package to try to read."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="forgegym-doctor-") as tmp:
        secret = os.path.join(tmp, "secret.txt")
        with open(secret, "w") as f:
            f.write("host secret")
        os.chmod(secret, 0o600)
        data_file = os.path.join(
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "__init__.py"
        )
        job_dir = os.path.join(tmp, "job")
        os.makedirs(os.path.join(job_dir, "pristine"))
        fixture = "expected values a test reads\n"
        with open(os.path.join(job_dir, "pristine", "fixture.txt"), "w") as f:
            f.write(fixture)
        job = CallJob(
            workdir=job_dir,
            calls=[CallSpec(target="forgegym.sandbox.selftest:report", args=[[secret, data_file]])],
            timeout_s=30,
            per_call_timeout_s=20,
            # The probe reads /proc and host paths on purpose: it measures the confinement
            # beneath the runtime policy, which would end it at the first such read.
            runtime_policy=False,
            pristine=pristine_manifest({"pristine/fixture.txt": fixture}),
        )
        with ForkServerRunner(workers=1) as runner:
            result = runner.run(job)
    outcome = result.outcome(0) if hasattr(result, "outcome") else None
    if outcome is None or not outcome.ok or not isinstance(outcome.value, dict):
        why = result.detail if result.status is not RunStatus.COMPLETED else str(outcome)
        return None, why
    return outcome.value, ""


def _privilege_rows(seen: dict[str, object], owned: set[str]) -> list[isolation.IsolationFeature]:
    """Who the job runs as, and with which capabilities."""
    Feature = isolation.IsolationFeature
    uid, gid = seen.get("uid"), seen.get("gid")
    cap = str(seen.get("cap_eff"))
    return [
        Feature(
            "user_namespace",
            "user" in owned and uid == confinement.SANDBOX_UID,
            f"job runs as uid {uid} gid {gid} in its own user namespace"
            if "user" in owned
            else f"job runs as uid {uid} in the host's user namespace",
        ),
        Feature(
            "capabilities",
            cap.strip("0") == "" and str(seen.get("cap_bnd")).strip("0") == "",
            f"effective {cap}, bounding {seen.get('cap_bnd')}, no_new_privs "
            f"{seen.get('no_new_privs')}",
        ),
    ]


def _namespace_rows(
    seen: dict[str, object], owned: set[str], host_paths: dict[object, object]
) -> list[isolation.IsolationFeature]:
    """The job's mount, IPC, PID, network and UTS namespaces."""
    Feature = isolation.IsolationFeature
    ifaces = seen.get("interfaces")
    return [
        Feature(
            "mount_namespace",
            "mnt" in owned and all(v != "ALLOWED" for v in host_paths.values()),
            "minimal root: the job cannot see forgegym's package or a 0600 host file "
            "(the protection working: "
            + ", ".join(sorted(set(map(str, host_paths.values()))))
            + ")"
            if "mnt" in owned
            else "host mount namespace: the job sees the host's files (Landlock aside)",
        ),
        Feature(
            "ipc_namespace",
            "ipc" in owned,
            "SysV IPC objects live in the job's own namespace and die with it"
            if "ipc" in owned
            else "host IPC namespace: SysV objects can outlive a job",
        ),
        Feature(
            "pid_namespace",
            seen.get("pid") == 1,
            "job is PID 1 of its own PID namespace: its whole tree dies with it"
            if seen.get("pid") == 1
            else f"job is pid {seen.get('pid')} (no PID namespace)",
        ),
        Feature(
            "network_namespace",
            "net" in owned and ifaces == ["lo"],
            f"own network namespace, interfaces {ifaces}: no route out",
        ),
        Feature(
            "uts_namespace",
            "uts" in owned,
            f"hostname {seen.get('hostname')!r}",
        ),
    ]


def _filter_rows(
    seen: dict[str, object], host_paths: dict[object, object]
) -> list[isolation.IsolationFeature]:
    """What the job's syscalls and file accesses are filtered by: seccomp and Landlock."""
    Feature = isolation.IsolationFeature
    sec = seen.get("seccomp")
    abi = isolation.landlock_abi()
    read_ok = (
        str(seen.get("list_root", "")).startswith("denied")
        and str(seen.get("read_pid1", "")).startswith(("denied", "missing"))
        and all(v != "ALLOWED" for v in host_paths.values())
    )
    return [
        Feature(
            "seccomp",
            sec == "2" and seen.get("keyctl") == "EPERM" and seen.get("ptrace") == "EPERM",
            f"filter mode {sec}: keyctl {seen.get('keyctl')}, ptrace {seen.get('ptrace')} "
            f"({len(confinement.DENIED_SYSCALLS)} syscalls and namespace-creating clone denied)",
        ),
        Feature(
            "read_confinement",
            read_ok,
            f"Landlock ABI {abi}: reads only in the job's copy and the read-only runtime "
            f"(listing / {seen.get('list_root')}, /proc/1 {seen.get('read_pid1')})",
        ),
        Feature(
            "landlock",
            abi >= 1 and str(seen.get("write_tmp", "")) != "ALLOWED",
            f"ABI {abi}: writes only in the job's copy (write to /tmp "
            f"{seen.get('write_tmp')})"
            + (
                ", loopback TCP inside the job's network namespace, signals and abstract "
                "sockets scoped"
                if abi >= 6
                else ""
            ),
        ),
    ]


def _job_rows(seen: dict[str, object]) -> list[isolation.IsolationFeature]:
    """The job's own copy (its tmpfs) and its environment."""
    Feature = isolation.IsolationFeature
    mount = seen.get("job_mount") or {}
    assert isinstance(mount, dict)
    size = int(mount.get("size_bytes") or 0)
    env_keys = cast("list[str]", seen.get("env_keys") or [])
    return [
        Feature(
            "job_tmpfs",
            mount.get("fstype") == "tmpfs" and seen.get("cwd") == isolation.JOB_DIR,
            f"fresh {size // (1 << 20)} MiB tmpfs on {seen.get('cwd')} per job and per rerun"
            if mount.get("fstype") == "tmpfs"
            else f"job copy on {mount.get('fstype') or 'the host disk'} at {seen.get('cwd')}",
        ),
        Feature(
            "pristine_readonly",
            all(
                str(seen.get(key)).startswith(("denied", "error"))
                for key in ("write_pristine", "move_pristine")
            )
            and seen.get("write_beside_pristine") == "ALLOWED",
            "the task's pristine files are read-only to everything the job runs, their "
            f"folders pinned (write {seen.get('write_pristine')}, moving the folder "
            f"{seen.get('move_pristine')}); a new file beside them "
            f"{str(seen.get('write_beside_pristine')).lower()} (design note 004, D11)",
        ),
        Feature(
            "environment",
            not any("KEY" in k or "TOKEN" in k for k in env_keys),
            f"job environment: {', '.join(env_keys)}",
        ),
    ]
