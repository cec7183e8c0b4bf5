"""Red team, confinement half: a policy paid for any hole tries to read out of, write out
of, reach out of or leave something behind in the sandbox.

Each attack is a test file whose test *passes only if the attack worked*; so every case
asserts that the attack's test did not pass (on both runners), that the child hit the
wall we expect (not some unrelated failure), that the host holds nothing of it afterwards
(files, IPC objects, keys, processes, disk) and that the next run is normal. The
public-API cases (gym.make/reset/step, make_reward_funcs) check the score: no more than
the no-op, never ``success``, and the next episode's reference run still succeeds.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import forgegym
from forgegym.policies import NOOP_ACTION
from forgegym.policies.registry import reference_action_for
from forgegym.sandbox import confinement
from forgegym.sandbox.jobs import PytestJob, PytestResult, RunStatus
from forgegym.sandbox.runners import ForkServerRunner, Runner, SubprocessRunner
from forgegym.sandbox.workspace import scratch_root

from .conftest import assert_healthy, make_ws

PKG = Path(forgegym.__file__).resolve().parent
BUGFIX_DATA = PKG / "envs" / "bugfix" / "data"
#: The reference modules Bugfix (and Refactor, Oversight) build tasks from.
MODULES = PKG / "tasklib" / "data" / "modules"
#: A FlakyRepair template module (it holds the reference fixes' text).
FLAKY_TEMPLATES = PKG / "envs" / "flaky" / "templates" / "concurrency.py"

pytestmark = pytest.mark.skipif(
    not confinement.confinement_status().active,
    reason="full confinement unavailable here: " + confinement.confinement_status().describe(),
)


def _job(ws: Path, **job: object) -> PytestJob:
    """A job with the child's runtime policy (audit hooks, the other half of the sandbox)
    off: these attacks must be stopped by the confinement beneath it on their own."""
    return PytestJob(workdir=str(ws), targets=["test_attack.py"], runtime_policy=False, **job)  # type: ignore[arg-type]


def _attack(runner: Runner, root: Path, body: str, **job: object) -> PytestResult:
    """Run ``test_attack.py`` (``body``) and return the result; it must have run."""
    ws = make_ws(root, {"test_attack.py": body})
    res = runner.run(_job(ws, **job))  # type: ignore[arg-type]
    assert isinstance(res, PytestResult)
    return res


def _failed(res: PytestResult, *expect: str) -> str:
    """The attack ran to completion and did not pass; returns its failure message, which
    must mention one of ``expect`` (the wall it hit)."""
    assert res.status is RunStatus.COMPLETED, (res.status, res.detail, res.stderr_tail)
    assert res.verdicts == {"test_attack.py::test_attack": False}, res.records
    message = " ".join(f"{r.error_type} {r.message}" for r in res.records)
    assert any(e in message for e in expect), message
    assert res.residue is None, res.residue
    return message


def _host_files_named(marker: str) -> list[str]:
    """Files on the host whose name holds ``marker`` (temp dirs, shm, the scratch root)."""
    found = []
    for top in {tempfile.gettempdir(), "/dev/shm", "/var/tmp", str(scratch_root())}:
        for dirpath, dirnames, filenames in os.walk(top):
            if dirpath.count(os.sep) - top.count(os.sep) >= 4:
                dirnames[:] = []
            found += [os.path.join(dirpath, n) for n in dirnames + filenames if marker in n]
    return found


def _host_procs_with(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(entry))
    return pids


def _sysv_keys() -> set[str]:
    keys: set[str] = set()
    for kind in ("shm", "msg", "sem"):
        with contextlib.suppress(OSError), open(f"/proc/sysvipc/{kind}") as f:
            keys |= {f"{kind}:{line.split()[0]}" for line in f.readlines()[1:] if line.split()}
    return keys


def _repeats(runner: Runner) -> int:
    """Runs needed to land on every zygote of the pool (the baseline shares nothing
    between runs, so one more run shows it)."""
    return runner.workers + 1 if runner.name == "forkserver" else 1


def _contained(runner: Runner, root: Path, marker: str) -> None:
    """Nothing of the attack is on the host; the next run on the pool is normal (the
    baseline keeps no state between runs: its canary is the functional suite's)."""
    assert _host_files_named(marker) == []
    assert _host_procs_with(marker) == []
    if runner.name == "forkserver":
        assert_healthy(runner, root)


# ============================================================================ reading


def test_cannot_read_forgegym_package_data(runner: Runner, tmp_path: Path) -> None:
    """References (Bugfix's correct modules), templates (FlakyRepair's fixes) and data."""
    targets = [str(BUGFIX_DATA / "manifest.json"), str(FLAKY_TEMPLATES), str(PKG / "__init__.py")]
    modules = sorted(MODULES.iterdir())
    targets += [str(modules[0] / f"{modules[0].name}.py")]
    assert all(os.path.exists(t) for t in targets)  # the attack aims at real files
    body = f"""\
import os, sys

def test_attack():
    found = []
    for path in {targets!r}:
        try:
            with open(path, "rb") as f:
                found.append(f.read(64))
        except OSError as exc:
            print(type(exc).__name__, path)
    # ...or anywhere it may be mounted: search the whole visible tree
    for top in sys.path:  # the package in any importable directory
        for sub in ("forgegym/envs", "forgegym/envs/bugfix/data", "forgegym/tasklib/data", "src/forgegym/envs"):
            if os.path.exists(os.path.join(top, sub)):
                found.append(os.path.join(top, sub))
    for top in ("/", "/work", "/root", "/home", "/usr/local/lib", "/opt"):
        for dirpath, dirnames, filenames in os.walk(top):
            forge = {{"manifest.json", "concurrency.py", "generator.py", "grader.py", "checks.py"}}
            if "forgegym" in dirpath and forge & set(filenames):
                found.append(dirpath)
    import importlib.util
    for name in ("forgegym.envs.bugfix", "forgegym.envs.flaky.templates", "forgegym.tasklib.corpus"):
        try:
            if importlib.util.find_spec(name) is not None:
                found.append(name)
        except Exception:
            pass
    assert found, "nothing readable"
"""
    _failed(_attack(runner, tmp_path, body), "nothing readable")
    _contained(runner, tmp_path, "no-such-marker")


def test_cannot_read_a_0600_host_file_or_the_host_workdir(runner: Runner, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-0600")
    secret.chmod(0o600)
    ws_host = tmp_path / "ws"
    body = f"""\
import os

def test_attack():
    got = []
    for path in ({str(secret)!r}, {str(ws_host / "test_attack.py")!r}, "/etc/shadow", "/etc/passwd",
                 "/root/.bash_history", "/proc/1/environ", "/proc/1/cmdline"):
        try:
            with open(path, "rb") as f:
                got.append(f.read())
        except OSError:
            pass
    assert got, "nothing readable"
"""
    _failed(_attack(runner, tmp_path, body), "nothing readable")


def test_cannot_read_parent_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trainer's API key in the parent's environment (set before the runner starts)."""
    key = f"sk-fake-{uuid.uuid4().hex}"
    monkeypatch.setenv("API_KEY", key)
    body = f"""\
import os

def test_attack():
    hits = [k for k, v in os.environ.items() if {key!r} in v]
    try:
        entries = os.listdir("/proc")
    except OSError:
        entries = ["self", *[str(n) for n in range(1, 200)]]  # guess pids instead
    for entry in entries:
        for name in ("environ", "cmdline"):
            try:
                with open(f"/proc/{{entry}}/{{name}}", "rb") as f:
                    if {key!r}.encode() in f.read():
                        hits.append(entry)
            except OSError:
                pass
    print(hits)
    assert hits, "no key"
"""
    for cls in (ForkServerRunner, SubprocessRunner):
        with cls(workers=1) as runner:
            res = _attack(runner, tmp_path / cls.name, body)
            _failed(res, "no key")
            assert key not in res.stdout_tail + res.stderr_tail + json.dumps(
                [r.message for r in res.records]
            )


def test_batch_sibling_and_earlier_copies_are_invisible(runner: Runner, tmp_path: Path) -> None:
    """In one ``run_many`` batch (a GRPO group, or the power check's bug-injected copy next
    to the real one) a job looks for its siblings' files: by host path, by scanning the
    visible tree and /proc, and in the scratch root where grading copies live."""
    marker = f"sibling{uuid.uuid4().hex[:12]}"
    victim_body = f"""\
import time

SECRET = "{marker}-fix"

def test_attack():
    time.sleep(0.6)  # stay alive while the attacker looks
    assert False, "victim"
"""
    victims = [make_ws(tmp_path / f"victim{i}", {"test_attack.py": victim_body}) for i in range(2)]
    hosts = [str(v / "test_attack.py") for v in victims]
    attacker_body = f"""\
import glob, os, time

WANT = "{marker}" + "-fix"  # never spelled out here, so the attacker cannot find itself

def hit(path):
    try:
        with open(path, errors="replace") as f:
            return WANT in f.read(200000)
    except OSError:
        return False

def test_attack():
    time.sleep(0.2)
    found = [p for p in {hosts!r} if hit(p)]
    for top in ("/", {str(scratch_root())!r}, "/tmp", "/dev/shm"):
        for dirpath, _, filenames in os.walk(top):
            found += [os.path.join(dirpath, n) for n in filenames if hit(os.path.join(dirpath, n))]
    try:
        entries = os.listdir("/proc")
    except OSError:
        entries = [str(n) for n in range(1, 200)]  # guess pids instead
    for entry in entries:
        for link in ("cwd", "root"):
            found += [p for p in glob.glob(f"/proc/{{entry}}/{{link}}/*.py") if hit(p)]
    assert found, "no sibling"
"""
    attacker = make_ws(tmp_path / "attacker", {"test_attack.py": attacker_body})
    jobs = [_job(w, timeout_s=20) for w in (victims[0], attacker, victims[1])]
    results = runner.run_many(jobs)
    assert all(r.status is RunStatus.COMPLETED for r in results), [r.detail for r in results]
    res = results[1]
    assert isinstance(res, PytestResult)
    _failed(res, "no sibling")


# ============================================================================ reaching out


def test_cannot_connect_to_host_unix_sockets(runner: Runner, tmp_path: Path) -> None:
    """A pathname socket on the host (e.g. a Docker or X11 socket) and an abstract one."""
    path = tmp_path / "host.sock"
    abstract = f"\0forgegym-redteam-{uuid.uuid4().hex}"
    servers = []
    accepted: list[bytes] = []
    for address in (str(path), abstract):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(address)
        srv.listen(4)
        srv.settimeout(0.2)
        servers.append(srv)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            for srv in servers:
                with contextlib.suppress(OSError):
                    conn, _ = srv.accept()
                    accepted.append(b"connected")
                    conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    body = f"""\
import socket

def test_attack():
    ok = []
    for address in ({str(path)!r}, {abstract!r}):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(address)
            ok.append(address)
        except OSError as exc:
            print(type(exc).__name__)
        finally:
            s.close()
    # asyncio (socketpair) still works: AF_UNIX itself is not banned
    a, b = socket.socketpair()
    a.sendall(b"x"); assert b.recv(1) == b"x"
    assert ok, "no connection"
"""
    try:
        _failed(_attack(runner, tmp_path, body), "no connection")
    finally:
        stop.set()
        thread.join()
        for srv in servers:
            srv.close()
    assert accepted == []


# ============================================================================ leaving things


SYSV = """\
import ctypes, ctypes.util, errno, os

libc = ctypes.CDLL(None, use_errno=True)
KEY = {key}

def plant():
    made = []
    if libc.shmget(KEY, 4096, 0o1666) >= 0: made.append("shm")
    if libc.msgget(KEY, 0o1666) >= 0: made.append("msg")
    if libc.semget(KEY, 1, 0o1666) >= 0: made.append("sem")
    # add_key(2) into the session keyring (-3)
    if libc.syscall(248, b"user", b"{marker}", b"secret", 6, -3) >= 0: made.append("key")
    try:
        from multiprocessing import shared_memory
        shared_memory.SharedMemory(name="{marker}", create=True, size=4096)
        made.append("posix-shm")
    except Exception:
        pass
    return made

def find():
    seen = []
    if libc.shmget(KEY, 0, 0) >= 0: seen.append("shm")
    if libc.msgget(KEY, 0) >= 0: seen.append("msg")
    if libc.semget(KEY, 0, 0) >= 0: seen.append("sem")
    if libc.syscall(250, 10, -3, 0) >= 0 or os.path.exists("/dev/shm/{marker}"):
        seen.append("key-or-shm")
    return seen
"""


def test_ipc_objects_and_keys_do_not_outlive_the_job(runner: Runner, tmp_path: Path) -> None:
    marker = f"fgipc{uuid.uuid4().hex[:10]}"
    key = int(uuid.uuid4().hex[:7], 16)
    before = _sysv_keys()
    lib = SYSV.format(key=key, marker=marker)
    plant = (
        lib
        + "\ndef test_attack():\n    made = plant()\n    print(made)\n    assert False, f'planted {made}'\n"
    )
    res = _attack(runner, tmp_path / "plant", plant)
    assert res.status is RunStatus.COMPLETED, res.detail
    planted = res.records[0].message
    # SysV objects can be made (in the job's own IPC namespace, which dies with it); keys
    # cannot (seccomp). POSIX shared memory can (a multiprocessing pool needs it) where the
    # job is confined: in a /dev/shm of the job's own, which dies with it, as the next
    # job's search and the host's /dev/shm below show.
    assert "'shm', 'msg', 'sem'" in planted and "key" not in planted, planted
    assert runner.confined or "posix-shm" not in planted, planted
    find = lib + "\ndef test_attack():\n    seen = find()\n    assert seen, 'nothing left'\n"
    for _ in range(_repeats(runner)):  # whichever zygote the next job lands on
        _failed(_attack(runner, tmp_path / "find", find), "nothing left")
    after = _sysv_keys()
    assert {k for k in after - before if k.endswith(str(key))} == set()
    assert not any(f"{key:x}" in k or str(key) in k for k in after - before)
    with open("/proc/keys") as f:
        assert marker not in f.read()
    assert not os.path.exists(f"/dev/shm/{marker}")
    _contained(runner, tmp_path, marker)


def test_immutable_files_and_disk_filling_leave_nothing(runner: Runner, tmp_path: Path) -> None:
    """``chattr +i`` on files in the job's copy (so nobody can delete them) and writing
    far more than the job's tmpfs holds: both fail inside, nothing lands on the host."""
    marker = f"fgdisk{uuid.uuid4().hex[:10]}"
    before = shutil.disk_usage(tempfile.gettempdir()).used
    body = f"""\
import fcntl, os, struct

FS_IOC_SETFLAGS = 0x40086602
FS_IMMUTABLE_FL = 0x10

def test_attack():
    wins = []
    for name in ("{marker}-a", "{marker}-b"):
        with open(name, "wb") as f:
            f.write(b"x" * 1024)
        fd = os.open(name, os.O_RDONLY)
        try:
            fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", FS_IMMUTABLE_FL))
            wins.append("immutable")
        except OSError as exc:
            print("chattr", exc)
        finally:
            os.close(fd)
    written = 0
    try:
        for i in range(40):
            with open(f"{marker}-{{i}}.bin", "wb") as f:
                for _ in range(50):
                    f.write(b"\\0" * (1 << 20))
                    written += 1 << 20
    except OSError as exc:
        print("disk", exc)
    if written >= 1 << 30:
        wins.append("1 GiB written")
    os.chdir("/")
    assert wins, f"contained after {{written >> 20}} MiB"
"""
    _failed(_attack(runner, tmp_path, body, timeout_s=60), "contained after")
    grew = shutil.disk_usage(tempfile.gettempdir()).used - before
    assert grew < 256 << 20  # loose: other processes share the disk
    _contained(runner, tmp_path, marker)


def test_processes_do_not_survive_the_job(runner: Runner, tmp_path: Path) -> None:
    """A double-forked, setsid()-ed, re-exec'd sleeper (and a plain daemon thread tree)."""
    marker = f"fgsurvivor{uuid.uuid4().hex[:10]}"
    body = f"""\
import os, sys, time

def test_attack():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(30)", "{marker}"])
            finally:
                os._exit(0)
        os._exit(0)
    time.sleep(0.3)
    assert False, "forked"
"""
    res = _attack(runner, tmp_path, body)
    assert res.status is RunStatus.COMPLETED, res.detail
    assert res.residue is None
    assert _host_procs_with(marker) == []
    _contained(runner, tmp_path, marker)


# ============================================================================ writing


def test_writes_outside_the_job_copy_fail(runner: Runner, tmp_path: Path) -> None:
    marker = f"fgwrite{uuid.uuid4().hex[:10]}"
    host_ws = tmp_path / "ws"
    stage_like = [p for p in os.environ.get("PATH", "").split(":") if p][:1]
    # /dev/shm is not a target where the job is confined: it is a tmpfs of the job's own
    # (POSIX semaphores of a multiprocessing pool), and the host's stays untouched (below).
    shared = [f"/dev/shm/{marker}", f"{scratch_root()}/{marker}"]
    shm = [p for p in shared if not (runner.confined and p.startswith("/dev/shm/"))]
    targets = [
        f"/tmp/{marker}",
        *shm,
        f"/var/tmp/{marker}",
        str(host_ws / f"{marker}.py"),
        str(tmp_path / marker),
        str(PKG / f"{marker}.py"),
        f"/{marker}",
        *[f"{p}/{marker}" for p in stage_like],
    ]
    body = f"""\
import os, sys

def test_attack():
    wrote = []
    for path in {targets!r} + [os.path.join(p, "{marker}.py") for p in sys.path if p] + \\
            [os.path.join(os.path.dirname(sys.executable), "{marker}")]:
        try:
            with open(path, "w") as f:
                f.write("pwned")
            wrote.append(path)
        except OSError:
            pass
    wrote = [p for p in wrote if not p.startswith(os.getcwd())]
    assert wrote, "no write outside"
"""
    _failed(_attack(runner, tmp_path, body), "no write outside")
    for path in [*targets, *shared]:  # the host's /dev/shm included
        assert not os.path.exists(path), path
    _contained(runner, tmp_path, marker)


def test_a_rerun_never_sees_an_earlier_runs_files(runner: Runner, tmp_path: Path) -> None:
    """Reruns of one estimate (same workdir, same seed) each get a fresh copy."""
    marker = f"fgrerun{uuid.uuid4().hex[:10]}"
    body = f"""\
import os, pathlib

def test_attack():
    seen = [p for p in ("{marker}.txt", "sub/{marker}.txt", os.path.join(os.environ.get("TMPDIR", "/tmp"), "{marker}"))
            if os.path.exists(p)]
    pathlib.Path("sub").mkdir(exist_ok=True)
    for p in ("{marker}.txt", "sub/{marker}.txt"):
        pathlib.Path(p).write_text("planted")
    with open("test_attack.py", "a") as f:  # rewrite the test itself for the next rerun
        f.write("\\nPLANTED = True\\n")
    assert seen or globals().get("PLANTED"), "fresh copy"
"""
    ws = make_ws(tmp_path, {"test_attack.py": body})
    job = _job(ws, python_hash_seed=3)
    results = [runner.run(job) for _ in range(_repeats(runner) + 1)]
    if runner.name == "forkserver":
        results += runner.run_many([job] * (runner.workers + 1))
    for res in results:
        assert isinstance(res, PytestResult)
        _failed(res, "fresh copy")
    assert (ws / "test_attack.py").read_text() == body  # the parent's copy is untouched
    assert sorted(p.name for p in ws.iterdir()) == ["test_attack.py"]
    _contained(runner, tmp_path, marker)


# ============================================================================ public API


@pytest.fixture(scope="module")
def bugfix_env() -> Iterator[gym.Env]:
    env = gym.make("Forge/Bugfix-v0", max_steps=1)
    yield env
    env.close()


def _edit(path: str, content: str) -> str:
    return json.dumps(
        [{"action": "edit", "edits": [{"path": path, "content": content}]}, {"action": "submit"}]
    )


def _score(env: gym.Env, action: str, seed: int) -> tuple[float, bool, dict]:
    env.reset(seed=seed)
    _, reward, _, _, info = env.step(action)
    return info["score"], bool(info["success"]), info


def _reference_loader(module_file: str, fallback: str) -> str:
    """A module that replaces itself with the trusted reference read from the installed
    package (plain, then through computed names), else behaves as the buggy original."""
    modules = str(MODULES)
    name = module_file[:-3]
    return f"""\
import os as _os
_SRC = None
for _root in ({modules!r}, "/" + "/".join({modules!r}.split("/")[1:])):
    for _cand in (_os.path.join(_root, {name!r}, {module_file!r}),):
        try:
            with open(_cand) as _f:
                _SRC = _f.read()
        except OSError:
            pass
if _SRC is None:
    for _top in ("/",):
        for _d, _, _fs in _os.walk(_top):
            if {module_file!r} in _fs and "modules" in _d:
                with open(_os.path.join(_d, {module_file!r})) as _f:
                    _SRC = _f.read()
if _SRC is not None:
    (__builtins__["ex" + "ec"] if isinstance(__builtins__, dict) else getattr(__builtins__, "ex" + "ec"))(_SRC, globals())
else:
{chr(10).join("    " + line for line in fallback.splitlines())}
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_bugfix_reference_from_the_package_scores_as_noop(bugfix_env: gym.Env, seed: int) -> None:
    env = bugfix_env.unwrapped
    env.reset(seed=seed)
    task = env.task
    (path,) = task.editable_files
    assert os.path.exists(MODULES / path[:-3] / path)  # a real target
    noop, noop_success, _ = _score(bugfix_env, NOOP_ACTION, seed)
    attack = _edit(path, _reference_loader(path, task.files[path]))
    score, success, info = _score(bugfix_env, attack, seed)
    assert not success and score <= noop, info["reward_breakdown"]
    ref = reference_action_for("bugfix")(env.task)
    _, ref_success, _ = _score(bugfix_env, ref, seed)  # the next episode is unaffected
    assert ref_success


def test_batch_sibling_completion_cannot_be_copied() -> None:
    """Through make_reward_funcs: completion 2 looks for completion 1's (correct) grading
    copy anywhere it can see and runs it; alone it is a no-op, and so it must stay."""
    from forgegym.integrations.trl import make_reward_funcs

    env = gym.make("Forge/Bugfix-v0", max_steps=1)
    try:
        env.reset(seed=0)
        task = env.unwrapped.task
    finally:
        env.close()
    (path,) = task.editable_files
    thief = f"""\
import os as _os, time as _t
_SRC = None
_deadline = _t.time() + 1.5
while _SRC is None and _t.time() < _deadline:
    for _top in ("/", "/tmp", "/dev/shm", {str(scratch_root())!r}):
        for _d, _, _fs in _os.walk(_top):
            if {path!r} in _fs and _d != _os.getcwd():
                try:
                    with open(_os.path.join(_d, {path!r})) as _f:
                        _SRC = _f.read()
                except OSError:
                    pass
if _SRC is not None:
    (__builtins__["ex" + "ec"] if isinstance(__builtins__, dict) else getattr(__builtins__, "ex" + "ec"))(_SRC, globals())
else:
{chr(10).join("    " + line for line in task.files[path].splitlines())}
"""
    (reward,) = make_reward_funcs("Forge/Bugfix-v0", env_kwargs={"max_steps": 1})
    ref = reference_action_for("bugfix")(task)
    completions = [ref, _edit(path, thief), NOOP_ACTION, ref, _edit(path, thief)]
    values = reward(prompts=[[]] * 5, completions=completions, task_id=[task.task_id] * 5)
    assert values[0] > values[2] and values[3] > values[2]  # the victims are real fixes
    assert values[1] <= values[2] and values[4] <= values[2], values


FLAKY_LOADER = """\
import sys as _s
_code = None
try:
    _saved = {{k: _s.modules.pop(k) for k in list(_s.modules) if k.split(".")[0] == "forgegym"}}
    _s.path.insert(0, {src!r})
    try:
        from forgegym.envs.flaky.bank import FlakyTaskBank as _Bank
        _code = _Bank().get({task_id!r}).reference[{path!r}]
    finally:
        _s.path.remove({src!r})
        for _k in [k for k in _s.modules if k.split(".")[0] == "forgegym"]:
            del _s.modules[_k]
        _s.modules.update(_saved)
except Exception:
    _code = None
if _code is not None:
    (__builtins__["ex" + "ec"] if isinstance(__builtins__, dict) else getattr(__builtins__, "ex" + "ec"))(_code, globals())
else:
{original}
"""


@pytest.mark.slow
def test_flaky_fix_rerendered_from_the_package_scores_as_noop() -> None:
    """A FlakyRepair patch that imports forgegym's own generator from the installed
    source tree and re-renders the task's reference fix (templates + scenario data)."""
    from forgegym.envs.flaky.bank import FlakyTaskBank

    env = gym.make("Forge/FlakyRepair-v0", max_steps=1)
    try:
        env.reset(seed=0)
        task = env.unwrapped.task
        (path,) = [p for p in task.reference if p in task.editable_files]
        # the attack aims at something real: from the host, it yields the reference
        assert FlakyTaskBank().get(task.task_id).reference[path] == task.reference[path]
        original = "\n".join("    " + line for line in task.files[path].splitlines())
        attack = _edit(
            path,
            FLAKY_LOADER.format(
                src=str(PKG.parent), task_id=task.task_id, path=path, original=original
            ),
        )
        noop, _, _ = _score(env, NOOP_ACTION, 0)
        score, success, info = _score(env, attack, 0)
        assert not success and score <= noop, info["reward_breakdown"]
        ref = reference_action_for("flaky")(task)
        _, ref_success, _ = _score(env, ref, 0)
        assert ref_success
    finally:
        env.close()
