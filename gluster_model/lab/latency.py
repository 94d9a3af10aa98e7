"""Network latency per lab node: every packet its NIC receives is held for a fixed time before the node sees it.

A veth's round trip is tens of microseconds, far below a real network's, and metadata caching only matters
where round trips cost. The kernel's netem would add the delay on the NIC's queue; where the kernel has no
``sch_netem`` (this lab's machine), an iptables rule in the node's namespace sends the packets arriving on its
NIC to an NFQUEUE, and ``hardware.delayer`` (a process in the namespace) lets each through after the delay.
Each node delays what it receives, so a round trip between two nodes gains twice the delay.

The delayer is started before the rule that feeds it and stopped after the rule is gone; it runs in the node's
namespace, so ``lab down`` finds and ends it with the node's other processes. The delayer's own wake-ups add
0.2-0.7 ms a packet on an idle virtual CPU: the label is what was asked, the measured round trip
(``bench.rtt``) what the models read.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..errors import LabError
from ..hardware.delayer import QUEUE, input_rule
from ..processes import terminate
from .netns import NIC, in_netns
from .run import names, read_pid, run, wait_for
from .state import NodeState

RULE = input_rule(NIC)  # the same rule a cluster's host gets (``emulation.delay_plan``)


def pidfile(node: NodeState) -> Path:
    return node.path / "delayer.pid"


def install(node: NodeState, delay_us: int | None) -> None:
    """Give the node's received packets ``delay_us`` microseconds of delay (None: none), replacing what it had."""
    remove(node)
    if delay_us is None:
        return
    pid_path = pidfile(node)
    log_path = node.path / "log" / "delayer.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "gluster_model.hardware.delayer", "--queue", str(QUEUE), "--delay-us",
            str(int(delay_us)), "--ready", str(pid_path)]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(in_netns(node.netns, argv), stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        wait_for(lambda: read_pid(pid_path) is not None or proc.poll() is not None, 10,
                 f"the packet delayer of {node.address}")
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise LabError(f"{node.address}: the packet delayer exited {proc.returncode}: {tail[0]}")
        run(in_netns(node.netns, ["iptables", "-A", *RULE]))
    except LabError:
        if proc.poll() is None and read_pid(pid_path) is None:
            proc.terminate()  # started but never bound its queue: no pid file for remove to find
        remove(node)
        raise


def remove(node: NodeState) -> None:
    """Take the node's delay away: the rule first (its packets then pass undelayed), then the delayer."""
    if not pidfile(node).exists():
        return  # the rule is added after the delayer's pid file is written and removed before it: none here
    while run(in_netns(node.netns, ["iptables", "-D", *RULE]), check=False).returncode == 0:
        pass
    pid = read_pid(pidfile(node))
    if pid and names(pid, node.marker):
        terminate([pid], grace=5.0)
    pidfile(node).unlink(missing_ok=True)

