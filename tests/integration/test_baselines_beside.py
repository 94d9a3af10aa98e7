"""Network and disk baselines measured at once where limits hold every link and brick device, on the lab: the
store keeps figures the limits explain, and a network pass no full link explains is kept as such and measured
again alone. (Where a disk has no limit, or by default on the lab, the network is measured first, alone: every
other collect test; the choice itself: tests/unit/test_baselines.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from gluster_model import api
from gluster_model.campaign.baselines import BESIDE
from gluster_model.campaign.progress import CampaignSummary, Reporter
from gluster_model.lab import LabState
from gluster_model.plan.factors import RunSpec
from gluster_model.store import open_store

AT_ONCE = "network and disk measured at once"
PLAN = {
    "name": "beside",
    "factors": {"link": ["500mbit", "100gbit"], "disk": "40MB/s", "file_size": "1MB",
                "record_size": "1MB", "threads": 1},
    "design": {"type": "grid", "hardware": {"type": "list", "settings": [
        {"link": "500mbit", "disk": "40MB/s"},     # both held: at once
        {"link": "100gbit", "disk": "40MB/s"},     # both limited, but no 3-node lab fills 100 Gbit/s links
    ]}},
    "workload": {"tests": ["write"]},
    "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none"},
    # at_once true: the lab's nodes share a machine, where auto measures one after the other
    # keep false: the second setting changes the link alone, and would keep the first's disk baseline
    "baselines": {"at_once": True, "keep": False, "iperf": {"seconds": 1, "omit": 0},
                  "fio": {"size": "16MB", "runtime": 1, "steady": True, "tests": ["seq_write", "seq_read"]}},
}


class Said:
    """Every status line of each campaign, by campaign name."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {}
        self._now: list[str] = []

    @contextmanager
    def campaign(self, name: str, total: int, done: int, where: str) -> Iterator[Reporter]:
        self._now = self.lines.setdefault(name, [])
        yield self

    def finished(self, summary: CampaignSummary) -> None:
        pass

    def note(self, message: str) -> None:
        self._now.append(message)

    def status(self, message: str) -> None:
        self._now.append(message)

    def run_started(self, position: int, total: int, run: RunSpec, eta_s: float | None) -> None:
        pass

    def run_finished(self, position: int, total: int, run: RunSpec, line: str, ok: bool) -> None:
        pass


def test_baselines_at_once_where_limits_hold_them_and_a_pass_no_link_explains_measured_again(
        lab_put_back: LabState, tmp_path: Path) -> None:
    plan = tmp_path / "beside.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    said = Said()
    store = str(tmp_path / "beside.db")
    summaries = api.collect(lab_put_back.cluster_file, plan, store=store, reporter=said)
    assert [s.failed for s in summaries] == [0, 0]
    assert all(s.first_run_seconds is not None and 0 < s.first_run_seconds <= s.wall_seconds for s in summaries)
    with open_store(store, create=False) as st:
        kept = {}
        for c in st.campaigns():
            assert c.hardware_key
            kept[c.name.split(":", 1)[1]] = st.baselines(c.hardware_key)
    held, unfillable = (kept[k] for k in ("link=500mbit,disk=40MB/s", "link=100gbit,disk=40MB/s"))
    lines = {k.split(":", 1)[1]: v for k, v in said.lines.items()}

    def figures(rows: list, kind: str, *tests: str) -> list[float]:  # type: ignore[type-arg]
        return [r.value for r in rows if r.kind == kind and r.error is None and (not tests or r.test in tests)]

    def marked(rows: list) -> list:  # type: ignore[type-arg]
        return [r for r in rows if r.error and r.error.startswith(BESIDE)]

    seq = ("seq_write", "seq_read")
    # Held: at once; every pair a share of a 500 Mbit/s link (a node sends to two peers at once), every disk
    # figure at its 40 MB/s limit (fio's own check) or measured again. A busy machine may hold a pass back: then it is kept marked
    # (each of its write and read pairs) and measured again, and the figures kept are the second pass's.
    assert any(AT_ONCE in line for line in lines["link=500mbit,disk=40MB/s"])
    pairs = figures(held, "network", "write")
    assert len(pairs) == 6 and all(0.1e9 < v < 0.3e9 for v in pairs), pairs
    assert sum(pairs) < 3 * 0.5e9 * 1.1  # three links out of 500 Mbit/s: a ceiling, whatever the load
    assert len(figures(held, "network")) == 6 + 6 + 6  # write pairs, read pairs (the same flows), round trips
    assert len(marked(held)) % 12 == 0  # none, or whole passes (a disturbed one is measured again, as any)
    disk = figures(held, "disk", *seq)
    # at its limit beside the network, or measured again alone (where a busy machine may take some: from below
    # the bound only tells the setting apart). Above, the throttle should be a ceiling, but with three labs on
    # the machine's one root blkio group a figure has come 18% (and in another test 30%) over its limit, cause
    # not found (2026-11-30): the bound above tells a throttled brick from an unthrottled one (over 25 times it)
    assert len(disk) == 6 and all(0.7 * 40e6 < v <= 1.5 * 40e6 for v in disk), disk

    # Unfillable: limits everywhere, so at once; no 100 Gbit/s link is full, so the pass is kept with each pair's
    # reason and measured again once fio has ended; the round trips are measured with the second pass only.
    assert any(AT_ONCE in line for line in lines["link=100gbit,disk=40MB/s"])
    first = marked(unfillable)
    # one pass, or more where a busy machine disturbed it and it was measured again beside fio: each kept whole
    assert len(first) >= 12 and len(first) % 12 == 0 and all(r.value and r.value > 0 for r in first), first
    assert all("crossed no link at 95% of its limit" in (r.error or "") for r in first)
    again = [r for r in unfillable if r.kind == "network" and r.error is None]
    assert len([r for r in again if r.test == "rtt"]) == 6 and len(again) == 18
    assert max(r.id for r in first) < min(r.id for r in again)  # kept in the order measured
    assert any("measuring it again alone" in line for line in lines["link=100gbit,disk=40MB/s"])
    assert len(figures(unfillable, "disk", *seq)) == 6
