"""A plan's hardware setting: asked of the local lab, or emulated on a cluster that allows it, and put back after.

On a glmodel lab every hardware factor is a lab setting (``lab.set_hardware``). On any other cluster only
``emulation.EMULATED`` factors run, and only when its cluster file allows it (``plan.file.expand`` refuses the
rest); each host records how to undo the change, and the plan's end (or ``glmodel restore``) undoes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config.cluster import ClusterSpec
from ..emulation import apply_link, restore
from ..errors import LabError
from ..remote.executor import Executor
from ..shaping import parse_rate
from .records import LabSetting


def apply_lab_setting(cluster: ClusterSpec, executor: Executor, setting: LabSetting,
                      progress: Callable[[str], None]) -> None:
    """Give every node (lab) or host (emulation) the setting's hardware."""
    if cluster.lab_dir is None:
        values = dict(setting)
        if set(values) - {"link"}:  # plan.expand refuses these first; a library caller gets the same answer
            raise LabError(f"{cluster.name} is not a glmodel lab; only its link can be emulated")
        progress(f"every host's NIC: link={values.get('link', 'unlimited')}")
        apply_link(cluster, executor, parse_rate(values.get("link", "unlimited")))
        return
    from ..lab import load_lab, parse_setting, set_hardware

    state = load_lab(cluster.lab_dir)
    settings: dict[str, Any] = {}
    for factor, text in setting:
        settings.update(parse_setting("backing" if factor == "brick_backing" else factor, text))
    progress("lab: every node's " + ", ".join(f"{k}={v}" for k, v in setting))
    set_hardware(state, [n.address for n in state.nodes], settings, progress=progress)


@dataclass(frozen=True)
class HardwareSnapshot:
    """What to put back after a plan: the lab's settings, or (``lab`` None) every host's own hardware."""

    lab: dict[str, dict[str, Any]] | None


def lab_snapshot(cluster: ClusterSpec) -> HardwareSnapshot:
    """The hardware before a plan changes it, for ``restore_lab``."""
    from ..lab import LabState, snapshot

    state = LabState.load(cluster.lab_dir) if cluster.lab_dir else None
    return HardwareSnapshot(snapshot(state) if state is not None else None)


def restore_lab(cluster: ClusterSpec, executor: Executor, snap: HardwareSnapshot,
                progress: Callable[[str], None]) -> None:
    """Put the hardware back as ``lab_snapshot`` found it (on a cluster: undo every host's record)."""
    if snap.lab is None:
        for host, outcome in restore(cluster, executor).items():
            progress(f"{host}: {outcome}")
        return
    from ..lab import load_lab
    from ..lab import restore as restore_nodes

    assert cluster.lab_dir is not None
    restore_nodes(load_lab(cluster.lab_dir), snap.lab, progress)
