"""CPU per lab node: a CFS bandwidth quota on the control group that holds every process of the node.

A quota of 0.5 lets the node's processes together use half of one core's time in every 100 ms period, like a
slower machine. The host facts measure it back with a short fixed CPU score run on the node (see
``preflight.cpu_score_script``); the models use that score, never the label.
"""

from __future__ import annotations

from ..hardware.group import cpu_files
from . import cgroups
from .run import write_knob
from .state import LabState, NodeState


def apply(state: LabState, node: NodeState) -> None:
    """Give the node the CPU recorded in ``state.cpu`` (no entry: unlimited, if the node has a group at all)."""
    cores = state.cpu.get(node.address)
    if cores is None and not cgroups.exists(state, node, "cpu"):
        return  # never limited: no group is needed
    group, where = cgroups.ensure(state, node, "cpu")
    for name, text in cpu_files(where.version, cores):
        write_knob(group / name, text)
