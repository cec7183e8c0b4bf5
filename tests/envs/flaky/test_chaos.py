"""The chaos that repository-mode reruns inject (``forgegym.envs.flaky.chaos``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROBE = textwrap.dedent(
    """
    import threading

    from forgegym.envs.flaky.chaos import _inject_thread_latency

    _inject_thread_latency(seed=7, probability=1.0)
    seen = []


    class Worker(threading.Thread):
        def run(self):
            seen.append("ran")


    plain = threading.Thread(target=seen.append, args=("target",))
    sub = Worker()
    for thread in (plain, sub):
        thread.start()
        thread.join()
    # The delay rides on each started instance, whatever class defines run().
    print(sorted(seen), "run" in vars(plain), "run" in vars(sub))
    """
)


def test_thread_latency_reaches_threads_of_subclasses_that_override_run() -> None:
    """A ``Thread`` subclass with its own ``run`` (OpenCue's ``Nimby``) is delayed like a
    ``Thread(target=...)``, and both still run their bodies. In a fresh interpreter: the
    injection patches ``threading`` for the whole process."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["['ran',", "'target']", "True", "True"], out.stderr
