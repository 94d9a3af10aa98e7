"""``processes.terminate_script``, run by a real shell on real processes: one that exits on SIGTERM is waited
for (a zombie counts as exited), one that ignores it is killed after the grace, and without ``kill`` it is left
(the latency knob's form)."""

from __future__ import annotations

import subprocess
import time

from gluster_model.processes import terminate_script, zombie

IGNORES_TERM = ["sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"]


def _end(pid: int, grace_s: float = 5.0, kill: bool = True) -> float:
    t0 = time.monotonic()
    subprocess.run(["sh", "-c", f"p={pid}; {terminate_script('$p', grace_s, kill)}; true"], check=True, timeout=30)
    return time.monotonic() - t0


def test_a_process_that_exits_on_sigterm_is_gone_when_the_script_returns() -> None:
    """Its parent (this test) reaps it only afterwards, so until then it is a zombie, which answers kill -0: the
    script counts it as exited and does not wait out its grace (a detached process on a host whose pid 1 does
    not reap, a container's, stays a zombie)."""
    proc = subprocess.Popen(["sleep", "30"])
    try:
        took = _end(proc.pid, grace_s=10)
        assert zombie(proc.pid) and proc.wait(timeout=1) == -15  # ended before the script returned
        assert took < 5, took  # not the 10 s grace
    finally:
        proc.kill()


def test_one_that_ignores_sigterm_is_killed_after_the_grace_and_left_without_kill() -> None:
    proc = subprocess.Popen(IGNORES_TERM)
    try:
        time.sleep(0.2)  # its trap set
        assert _end(proc.pid, grace_s=0.5, kill=False) >= 0.5 and proc.poll() is None and not zombie(proc.pid)
        _end(proc.pid, grace_s=0.5)
        assert proc.wait(timeout=2) == -9
    finally:
        proc.kill()
