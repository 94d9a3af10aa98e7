"""A campaign's baselines (iperf3 between clients and servers, round trips, fio per brick), each measured between
two snapshots of every host, as a trial is (``trial_context``), and measured again when something disturbed it.

Why a baseline needs this more than a trial: it is the capacity every run of its hardware setting is modelled
with (``dataset``: ``network_gbps``, ``disk_*_mbps``; the bottleneck model's stages are proportional to them), so a
link measured 3% slow while something else used the CPUs moves every prediction of that setting by 3%, where a
disturbed trial moves one run. A measurement something disturbed is kept in the store as an error row whose
error says what disturbed it (no model reads a baseline row with an error) and measured again, up to the
protocol's ``max_reruns`` times; the last is kept whatever it saw, and a line that stays says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from ..bench.engine import Measured
from ..bench.fio import DiskTest, HostDisks, limited_everywhere
from .trial_context import HostSnapshot, disturbances

DISTURBED = "disturbed: "  # the start of a disturbed measurement's error, as a disturbed trial's reason starts
# The start of the error of a network pass measured beside the disk baseline that no full link explains: kept, and
# measured again alone (``Collector._network_beside``).
BESIDE = "short beside the disk baseline: "


def measured_alone(what: str, measure: Callable[[], list[Measured]], snap: Callable[[], dict[str, HostSnapshot]],
                   remeasures: int, status: Callable[[str], None], note: Callable[[str], None]) -> list[Measured]:
    """Every measurement ``measure`` made of ``what`` (e.g. "network baseline"): the disturbed ones with their
    error set, then the one kept (the first undisturbed, or the last allowed)."""
    out: list[Measured] = []
    for attempt in range(remeasures + 1):
        before = snap()
        t0 = time.monotonic()
        found = measure()
        after = snap()
        seen = disturbances(before, after, time.monotonic() - t0, None)
        if not seen:
            return out + found
        if attempt < remeasures:
            reason = DISTURBED + "; ".join(seen)
            out += [m if m.error else replace(m, error=reason) for m in found]
            status(f"{what} disturbed ({seen[0]}); measuring it again")
            continue
        note(f"{what} disturbed ({seen[0]}) after {attempt} re-measurement(s); kept, as the protocol allows no more")
        out += found
    return out


def at_once(wanted: bool | str, links: dict[str, int | None], where: dict[str, HostDisks],
            tests: list[DiskTest]) -> bool:
    """Whether the network and disk baselines may be measured at once (``Baselines.at_once``): only where a limit
    holds every host's link and every brick device for each of ``tests`` (a figure one measurement held the
    other's back would fall short of its limit, and is seen), and, for "auto", no two servers share a machine
    (on the lab, whose nodes share two cores, fio's figures fell 1-2% and iperf3's up to 1% beside each other,
    within the check's tolerance: ``benchmarks/setting_cost.py``)."""
    if wanted is False or not links or any(rate is None for rate in links.values()):
        return False
    if not limited_everywhere(where, tests):
        return False
    return wanted is True or not any(d.shared for d in where.values())
