"""A plan's lab hardware setting: asked of the local lab before a campaign, and the lab put back after.

Plans with lab factors only run on a glmodel lab (see ``plan.file.expand``); a real cluster's hardware is the
user's to change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config.cluster import ClusterSpec
from ..errors import LabError
from .records import LabSetting

def apply_lab_setting(cluster: ClusterSpec, setting: LabSetting, progress: Callable[[str], None]) -> None:
    """Ask the local lab for a hardware setting (plans with lab factors only run on a lab: see plan.expand)."""
    from ..lab import load_lab, parse_setting, set_hardware

    if cluster.lab_dir is None:
        raise LabError(f"{cluster.name} is not a glmodel lab; its hardware cannot be changed by a plan")
    state = load_lab(cluster.lab_dir)
    settings: dict[str, Any] = {}
    for factor, text in setting:
        settings.update(parse_setting("backing" if factor == "brick_backing" else factor, text))
    progress("lab: every node's " + ", ".join(f"{k}={v}" for k, v in setting))
    set_hardware(state, [n.address for n in state.nodes], settings, progress=progress)


def lab_snapshot(cluster: ClusterSpec) -> dict[str, dict[str, Any]] | None:
    """The lab's hardware before a plan changes it (None for a real cluster), for ``restore_lab``."""
    from ..lab import LabState, snapshot

    state = LabState.load(cluster.lab_dir) if cluster.lab_dir else None
    return snapshot(state) if state is not None else None


def restore_lab(cluster: ClusterSpec, snap: dict[str, dict[str, Any]], progress: Callable[[str], None]) -> None:
    """Put the lab's hardware back as ``lab_snapshot`` found it."""
    from ..lab import load_lab, restore

    assert cluster.lab_dir is not None
    restore(load_lab(cluster.lab_dir), snap, progress)

