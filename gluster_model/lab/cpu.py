"""CPU per lab node: a CFS bandwidth quota on the control group that holds every process of the node.

A quota of 0.5 lets the node's processes together use half of one core's time in every 100 ms period, like a
slower machine. The host facts measure it back with a short fixed CPU score run on the node (see
``preflight.cpu_score_script``); the models use that score, never the label.
"""

from __future__ import annotations


from . import cgroups
from .run import write_knob
from .state import LabState, NodeState

PERIOD_US = 100_000








def quota_knobs(version: int, cores: float | None) -> list[tuple[str, str]]:
    """(file, text) writes that give a group ``cores`` of CPU time (None: no quota)."""
    quota = -1 if cores is None else max(1000, round(cores * PERIOD_US))
    if version == 1:
        return [("cpu.cfs_period_us", str(PERIOD_US)), ("cpu.cfs_quota_us", str(quota))]
    return [("cpu.max", f"{'max' if quota < 0 else quota} {PERIOD_US}")]


def apply(state: LabState, node: NodeState) -> None:
    """Give the node the CPU recorded in ``state.cpu`` (no entry: unlimited, if the node has a group at all)."""
    cores = state.cpu.get(node.address)
    if cores is None and not cgroups.exists(state, node, "cpu"):
        return  # never limited: no group is needed
    group, where = cgroups.ensure(state, node, "cpu")
    for name, text in quota_knobs(where.version, cores):
        write_knob(group / name, text)
