"""RAM per lab node: a memory limit on the control group that holds every process of the node.

Page cache is charged to the group whose process first touched the page, so a node whose group may use 1 GiB
caches at most about that much of what its FUSE client, iozone or bricks read and write: a file larger than the
limit is really read from the cluster. Pages cached earlier by another group are not charged again, so the
caches are dropped whenever a limit changes. The limit is measured back as a host fact (the effective RAM a
process on the node sees), never taken from the label.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..hardware.group import memory_file
from . import cgroups
from .run import write_knob
from .state import LabState, NodeState


def drop_caches() -> None:
    """Write back and drop the page cache, so that every page is charged anew to the group that reads it."""
    subprocess.run(["sync"], check=False, timeout=120)
    write_knob(Path("/proc/sys/vm/drop_caches"), "3")


def apply(state: LabState, node: NodeState) -> None:
    """Give the node the RAM recorded in ``state.ram`` (no entry: unlimited, if the node has a group at all)."""
    n = state.ram.get(node.address)
    if n is None and not cgroups.exists(state, node, "memory"):
        return  # never limited: no group is needed
    group, where = cgroups.ensure(state, node, "memory")
    drop_caches()  # first, so a lower limit needs no reclaim and no page stays charged elsewhere
    name, text = memory_file(where.version, n)
    write_knob(group / name, text)
