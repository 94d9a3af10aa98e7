"""A plan's hardware setting: asked of the local lab, or emulated on a cluster that allows it, and put back after.

On a glmodel lab every hardware factor is a lab setting (``lab.set_hardware``). On any other cluster the
``emulation.EMULATED`` factors (link, disk, RAM, CPU) run, and only when its cluster file allows it
(``plan.file.expand`` refuses the rest); each host records how to undo the change, and the plan's end (or
``glmodel restore``) undoes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config.cluster import ClusterSpec
from ..hardware.emulation import EMULATED, Share, apply_hardware, is_share, parse_share, restore
from ..errors import ConfigError, LabError
from ..remote.executor import Executor
from .records import LabSetting
from ..hardware.settings import PAIRS, STEPPED, KnobValue, KnobValues, knob_of, parse_setting
from ..remote.ssh_mux import SSH_MUX
from ..lab import LabState, load_lab, restore as restore_nodes, set_hardware, snapshot


def apply_lab_setting(executor: Executor, setting: LabSetting,
                      progress: Callable[[str], None], note: Callable[[str], None] = lambda m: None) -> None:
    """Give every node (lab) or host (emulation) the setting's hardware; ``note`` is told, per host of a
    cluster, what was changed there."""
    cluster = executor.cluster

    if cluster.lab_dir is None:
        other = [f for f, _ in setting if f not in EMULATED]
        if other:  # plan.expand refuses these first; a library caller gets the same answer
            raise LabError(f"{cluster.name} is not a glmodel lab; {other[0]} cannot be emulated on it (glmodel "
                           f"emulates {', '.join(EMULATED)})")
        knobs: dict[str, KnobValue | Share] = {}
        for factor, text in setting:
            try:  # RAM and CPU are bounded by each host's own (emulation checks them there), not this machine's
                if is_share(text):  # of what each host has: resolved on the host
                    knobs.update({k: parse_share(text) for k in PAIRS.get(factor, (factor,))})
                else:
                    knobs.update(parse_setting(factor, text, on_this_machine=False))
            except ValueError as exc:
                raise ConfigError(cluster.source, f"factors.{factor}", str(exc)) from None
        progress("every host: " + (", ".join(f"{k}={v}" for k, v in setting) or "its own hardware"))
        for host, words in apply_hardware(executor, knobs).items():
            note(f"{host}: {words}")
        _reconnect(executor, setting)
        return

    state = load_lab(cluster.lab_dir)
    settings: KnobValues = {}
    for factor, text in setting:
        settings.update(parse_setting(knob_of(factor), text))
    progress("lab: every node's " + ", ".join(f"{k}={v}" for k, v in setting))
    set_hardware(state, [n.address for n in state.nodes], settings, progress=progress)
    _reconnect(executor, setting)


def _reconnect(executor: Executor, setting: LabSetting) -> None:
    """After a knob whose change old connections may not survive (``HostStep.reconnect``: a smaller MTU), every
    connection to the hosts is opened again: the executor's, and the shared ones iozone's sessions ride on."""
    if any((k := STEPPED.get(knob_of(f))) is not None and k.step is not None and k.step.reconnect
           for f, _ in setting):
        for host in executor.cluster.hosts:
            executor.drop(host.address)
        SSH_MUX.close()


@dataclass(frozen=True)
class HardwareSnapshot:
    """What to put back after a plan: the lab's settings, or (``lab`` None) every host's own hardware."""

    lab: dict[str, KnobValues] | None


def lab_snapshot(cluster: ClusterSpec, progress: Callable[[str], None] = lambda m: None) -> HardwareSnapshot:
    """The hardware before a plan changes it, for ``restore_lab``. On a lab it is recorded in the lab's state
    first; one an earlier plan recorded and never put back (it was killed) is the lab's own, and is used."""
    state = LabState.load(cluster.lab_dir) if cluster.lab_dir else None
    if state is None:
        return HardwareSnapshot(None)
    if state.before_plan is not None:
        progress("an earlier plan was stopped before it put the lab's hardware back: this plan puts it back")
        return HardwareSnapshot(state.before_plan)
    state.before_plan = snapshot(state)
    state.save()
    return HardwareSnapshot(state.before_plan)


def restore_lab(executor: Executor, snap: HardwareSnapshot,
                progress: Callable[[str], None]) -> None:
    """Put the hardware back as ``lab_snapshot`` found it (on a cluster: undo every host's record)."""
    cluster = executor.cluster
    if snap.lab is None:
        for host, outcome in restore(executor).items():
            progress(f"{host}: {outcome}")
        return

    assert cluster.lab_dir is not None
    restore_nodes(load_lab(cluster.lab_dir), snap.lab, progress)
    state = load_lab(cluster.lab_dir)
    state.before_plan = None  # put back: nothing for a later plan to undo
    state.save()
