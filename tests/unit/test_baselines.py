"""A baseline something disturbed is kept as an error naming what, and measured again; the last allowed is kept
whatever it saw (``campaign.baselines``). Snapshots and measurements are scripted; the lab's integration test
runs a real CPU hog beside a real baseline."""

from __future__ import annotations

from gluster_model.bench.engine import Measured
from gluster_model.campaign.baselines import DISTURBED, measured_alone
from gluster_model.campaign.trial_context import HostSnapshot

HOSTS = ("10.9.0.1", "10.9.0.2")


class Scripted:
    """Snapshots in pairs around each measurement: during the measurements named in ``busy`` (from 0) a process
    called ``stress`` on the second host uses a CPU-second; each measurement is one link figure, 100.0 + its
    index, the second a failed pair too."""

    def __init__(self, busy: set[int]) -> None:
        self.busy, self.snaps, self.measures, self.ticks = busy, 0, 0, 0

    def snap(self) -> dict[str, HostSnapshot]:
        k, self.snaps = self.snaps, self.snaps + 1
        if k % 2 and k // 2 in self.busy:
            self.ticks += 100
        return {h: HostSnapshot(0.1, 2, 8 << 20, 6 << 20, 100,
                                {(4242, "stress"): self.ticks if h == HOSTS[1] else 0}) for h in HOSTS}

    def measure(self) -> list[Measured]:
        i, self.measures = self.measures, self.measures + 1
        return [Measured("network", HOSTS[0], HOSTS[1], "write", 100.0 + i, "bit/s"),
                Measured("network", HOSTS[1], HOSTS[0], "write", None, "bit/s", error="iperf3 exited 1")]


def _run(busy: set[int], remeasures: int) -> tuple[list[Measured], list[str], list[str]]:
    s, status, notes = Scripted(busy), [], []  # type: ignore[var-annotated]
    out = measured_alone("network baseline", s.measure, s.snap, remeasures, status.append, notes.append)
    return out, status, notes


def test_a_disturbed_baseline_is_kept_as_an_error_naming_what_and_measured_again() -> None:
    out, status, notes = _run(busy={0}, remeasures=3)
    assert [m.value for m in out] == [100.0, None, 101.0, None]  # the disturbed measurement, then the kept one
    first = out[0].error or ""
    assert first.startswith(DISTURBED) and "10.9.0.2: other processes used" in first and "stress (pid 4242)" in first
    assert out[1].error == "iperf3 exited 1"  # a failed figure keeps its own error
    assert out[2].error is None and out[3].error == "iperf3 exited 1"
    assert len(status) == 1 and "network baseline disturbed (10.9.0.2" in status[0] and notes == []


def test_an_undisturbed_baseline_is_measured_once() -> None:
    out, status, notes = _run(busy=set(), remeasures=3)
    assert [m.value for m in out] == [100.0, None] and out[0].error is None and status == notes == []


def test_the_last_allowed_measurement_is_kept_whatever_it_saw_and_said_so() -> None:
    out, status, notes = _run(busy={0, 1, 2}, remeasures=2)
    kept = [m for m in out if m.error is None]
    assert [m.value for m in kept] == [102.0] and len([m for m in out if (m.error or "").startswith(DISTURBED)]) == 2
    assert len(status) == 2 and len(notes) == 1 and "after 2 re-measurement(s); kept" in notes[0]
    out, status, notes = _run(busy={0}, remeasures=0)  # no re-measurement allowed: kept at once, with a note
    assert [m.value for m in out if m.error is None] == [100.0] and status == [] and len(notes) == 1


def test_network_and_disk_at_once_only_where_limits_hold_both_and_by_default_on_machines_of_their_own() -> None:
    from gluster_model.campaign.baselines import at_once
    from gluster_model.bench.fio import HostDisks

    limit = {"/b": {"read_bps": 10**8, "write_bps": 10**8}}
    own = {a: HostDisks(f"boot-{a}", limits=limit) for a in ("a", "b")}
    shared = {a: HostDisks("one", shared=True, limits=limit) for a in ("a", "b")}
    links = {"a": 10**9, "b": 10**9, "c": 10**9}
    seq = ["seq_write", "seq_read"]
    assert at_once("auto", links, own, seq)  # type: ignore[arg-type]
    assert not at_once("auto", links, shared, seq)  # type: ignore[arg-type]
    assert at_once(True, links, shared, seq)  # type: ignore[arg-type]
    assert not at_once(False, links, own, seq)  # type: ignore[arg-type]
    # a link without a limit (the client c) or a device without one: nothing would show a figure held back
    assert not at_once(True, {**links, "c": None}, own, seq)  # type: ignore[arg-type]
    assert not at_once(True, links, {**own, "b": HostDisks("boot-b")}, seq)  # type: ignore[arg-type]
    assert not at_once(True, links, own, [*seq, "rand_read"])  # type: ignore[arg-type]  # IOPS unbounded
