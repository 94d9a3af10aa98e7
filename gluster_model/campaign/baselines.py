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
from .trial_context import HostSnapshot, disturbances

DISTURBED = "disturbed: "  # the start of a disturbed measurement's error, as a disturbed trial's reason starts


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
