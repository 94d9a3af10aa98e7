"""A hardware knob as one object: its name and text, the model inputs it moves, and (for a knob set by commands on
a host) how it is read, set and put back there.

A knob set by commands (``step``) needs nothing else: the lab's nodes and a cluster's hosts are set by the same
commands (on a node in its network namespace, on a host over SSH), the value a host had is read before the first
change and put back by the knob's own ``restore``, and the CLI option, plan factor, lab state and emulation's
record all follow from the entry. A new such knob is one module in ``hardware/knobs/`` defining ``KNOB`` (found
there at import; ``hardware/knobs/mtu.py`` and ``latency.py`` are). The knobs with mechanisms of their own (tc
shaping, block throttles, cgroups) are entries of ``hardware.settings.KNOB_LIST`` with those mechanisms in
``lab/`` and ``hardware/emulation.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# A knob's parsed value: bit/s, bytes/s, operations/s, bytes or µs (int), cores (float), a backing (str), None for
# unlimited (or "as the host has it"). Settings cross packages as {knob: KnobValue}, never as untyped dictionaries.
KnobValue = int | float | str | None
KnobValues = dict[str, KnobValue]
Argv = list[str]


def whole(knob: str, value: object) -> int | None:
    """A knob's parsed value that is a whole number (bit/s, bytes, µs) or None; ValueError for anything else,
    which no parser gives (a caller handed text or a fraction where a parsed setting belongs)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise ValueError(f"{knob} {value!r} is not a parsed value (parse it with hardware.settings.parse_setting)")


@dataclass(frozen=True)
class HostStep:
    """How a knob of a host's NIC is read, set and put back, as commands run as root on the host (a cluster's
    over SSH, a lab node's in its network namespace). ``nic`` is the interface holding the host's cluster
    address, its name checked before it reaches a command; ``files`` the prefix of a path for any file the knob
    keeps on the host (a program it runs, a pid file): root's alone, one set per host (a lab node's directory,
    or beside a cluster host's emulation record). ``restore`` may refuse (ValueError, saying why) what the host
    had when the knob cannot be put back over it: nothing has been changed yet when it is asked."""

    read: Callable[[str], str]                          # nic -> a shell line printing, on one line, what it has
    apply: Callable[[KnobValue, str, str], list[Argv]]  # (parsed value, nic, files) -> commands that set it
    restore: Callable[[str, str, str], list[Argv]]      # (what ``read`` printed, nic, files) -> commands undoing it
    # connections opened before the change may not survive it (a smaller MTU: a peer keeps sending segments
    # of the size agreed before, which the NIC now drops without a word): reconnect to the host after it
    reconnect: bool = False
    # (value, nic) -> what was done, in words, for the host's line (else "<knob> <value> (was <what it had>)")
    say: Callable[[KnobValue, str], str] | None = None


@dataclass(frozen=True)
class Knob:
    """One hardware setting, wherever it is given: a lab node's (``lab up``/``lab node --NAME``, with dashes),
    a plan's factor (``factor``, where its name differs), a what-if file's ``lab:`` entry, an emulated setting on a
    cluster (``emulated``). ``parse`` reads its text ("unlimited" is None everywhere but backing) and ``show``
    writes it back; a shorthand (``sets``) gives two knobs one value. ``moves``: the measured model inputs a
    change of it moves (``model.features.held_by_design``). ``step``: a knob set by commands on a host (module
    docstring); without it, its mechanism is a lab module and a step of ``hardware/emulation.py``."""

    name: str
    help: str
    parse: Callable[[str], KnobValue] | None = None  # None: a shorthand, parsed as its first knob
    show: Callable[[Any], str] | None = None
    sets: tuple[str, ...] = ()
    moves: tuple[str, ...] = ()
    emulated: bool = False
    factor: str | None = None  # the plan factor's name, where it differs from ``name``
    option: bool = True  # a CLI option and a plan factor (False: reached through a shorthand only)
    shares: bool = True  # a plan may give it as a share of each host's own ("50%"); a delay is not a share
    limit: str | None = None  # a block-throttle limit's key (read_bps, ..) on the lab's nodes and on hosts alike
    step: HostStep | None = None
    # The baselines whose figures a change of it can move ("network": iperf3 and round trips, "disk": fio): a
    # setting that changes only knobs outside a baseline's keeps that baseline (``campaign.records.baseline_key``).
    # Both unless the knob says otherwise: a knob that cannot tell re-measures everything.
    baselines: tuple[str, ...] = ("network", "disk")

    @property
    def factor_name(self) -> str:
        return self.factor or self.name
