"""Reading what could have disturbed a trial: snapshots of /proc, the processes that used a CPU beside it,
low memory, pending heals."""

from __future__ import annotations

import subprocess

import pytest

from gluster_model.campaign.trial_context import (HostSnapshot, SNAPSHOT, disturbances, heavy_processes,
                                        parse_snapshot)
from gluster_model.gluster.volume import parse_heal


def _snap(ticks: dict[tuple[int, str], int], avail_kb: int = 4 << 20) -> HostSnapshot:
    return HostSnapshot(0.5, 2, 8 << 20, avail_kb, 100, ticks)


def test_the_snapshot_script_parses_on_this_machine() -> None:
    snap = parse_snapshot(subprocess.run(["sh", "-c", SNAPSHOT], capture_output=True, text=True, check=True).stdout)
    assert snap.cpus >= 1 and snap.ticks_per_s > 0 and 0 < snap.mem_available_kb <= snap.mem_total_kb
    assert len(snap.cpu_ticks) > 3 and any(cmd == "sh" for _, cmd in snap.cpu_ticks)
    assert not any(cmd.startswith("kworker") for _, cmd in snap.cpu_ticks)  # kernel threads are left out


def test_a_command_with_spaces_and_parentheses_is_read_after_the_last_parenthesis() -> None:
    head = "0.10 0.20 0.30 1/100 42\n100\n4\nMemTotal: 8000 kB\nMemAvailable: 6000 kB\n---\n"
    stat = "77 (my (odd) name) R 1 77 77 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0\n"
    snap = parse_snapshot(head + stat)
    assert snap.cpu_ticks == {(77, "my (odd) name"): 300} and snap.load1 == 0.10 and snap.cpus == 4


def test_only_a_process_outside_the_system_under_test_using_half_a_cpu_counts() -> None:
    before = _snap({(10, "stress"): 1000, (11, "glusterfsd"): 0, (12, "cron"): 5})
    after = _snap({(10, "stress"): 1900, (11, "glusterfsd"): 2000, (12, "cron"): 6, (13, "backup"): 600})
    heavy = heavy_processes(before, after, seconds=10.0)  # 100 ticks/s: stress used 0.9 CPU, backup (new) 0.6
    assert [(c, p) for c, p, _ in heavy] == [("stress", 10), ("backup", 13)]  # cron: 0.001, not named
    assert heavy[0][2] == pytest.approx(0.9)


def test_disturbances_name_each_process_once_and_heals_and_low_memory() -> None:
    before = {"a": _snap({(10, "stress"): 0}), "b": _snap({(10, "stress"): 0})}
    after = {"a": _snap({(10, "stress"): 800}), "b": _snap({(10, "stress"): 810}, avail_kb=100 << 10)}
    found = disturbances(before, after, 10.0, heal=3)
    assert found == ["3 heal entries pending when it started",
                     "a: other processes used 80% of a CPU beside it: stress (pid 10) 80%",
                     "b: 100 MB of 8192 MB available after it"]
    # Several small ones add up; one alone below half a CPU does not count.
    many = {(20 + i, f"job{i}"): 120 for i in range(5)}
    found = disturbances({"a": _snap({})}, {"a": _snap(many)}, 10.0, heal=None)
    assert found == ["a: other processes used 60% of a CPU beside it: job0 (pid 20) 12%, job1 (pid 21) 12%, "
                     "job2 (pid 22) 12% and 2 more"]
    assert disturbances({"a": _snap({})}, {"a": _snap({(30, "one"): 400})}, 10.0, heal=None) == []
    assert disturbances({"a": _snap({})}, {"a": _snap({})}, 10.0, heal=0) == []


def test_heal_counts_are_summed_over_bricks() -> None:
    text = ("Gathering count of entries to be healed on volume v has been successful\n\nBrick h1:/b\n"
            "Number of entries: 2\n\nBrick h2:/b\nNumber of entries: 5\n")
    assert parse_heal(text) == 7
    assert parse_heal("Volume v is not of type replicate\n") is None


def _procs(rows: dict[tuple[int, str], tuple[int, int, int]]) -> HostSnapshot:
    """(pid, command) -> (own ticks, reaped children's ticks, ppid)."""
    return HostSnapshot(0.5, 2, 8 << 20, 4 << 20, 100, {p: r[0] for p, r in rows.items()},
                        {p: r[1] for p, r in rows.items()}, {p: r[2] for p, r in rows.items()})


def test_the_snapshot_reads_reaped_childrens_time_and_the_parent() -> None:
    head = "0.10 0.20 0.30 1/100 42\n100\n4\nMemTotal: 8000 kB\nMemAvailable: 6000 kB\n---\n"
    stat = "77 (make) S 12 77 77 0 -1 4194560 100 0 0 0 250 50 700 40 20 0 1 0 100 0 0\n"
    snap = parse_snapshot(head + stat)
    assert snap.cpu_ticks == {(77, "make"): 300} and snap.child_ticks == {(77, "make"): 740}
    assert snap.parent == {(77, "make"): 12} and snap.total((77, "make")) == 1040


def test_short_lived_children_are_counted_through_the_parent_that_reaped_them() -> None:
    # make spawned compilers that each lived less than the trial: neither snapshot saw one, make reaped 0.9 CPU
    before = _procs({(10, "make"): (5, 1000, 1)})
    after = _procs({(10, "make"): (6, 1900, 1)})
    assert [(c, p, round(s, 2)) for c, p, s in heavy_processes(before, after, 10.0)] == [("make", 10, 0.9)]
    found = disturbances({"a": before}, {"a": after}, 10.0, heal=None)
    assert found == ["a: other processes used 90% of a CPU beside it: make (pid 10) 90%"]


def test_a_long_lived_child_ending_brings_only_its_last_part_to_the_parent() -> None:
    # a 50 s job (seen at the first snapshot) ended 0.2 s into the trial: its parent's count jumps by 50.2 s,
    # of which the trial shared 0.2 s
    before = _procs({(10, "python"): (10, 0, 1), (11, "job"): (5000, 0, 10)})
    after = _procs({(10, "python"): (10, 5020, 1)})
    assert [(c, p, round(s, 2)) for c, p, s in heavy_processes(before, after, 4.0)] == [("python", 10, 0.05)]
    assert disturbances({"a": before}, {"a": after}, 4.0, heal=None) == []


def test_init_and_shells_reaped_children_are_not_counted() -> None:
    # init reaps every orphan (the system under test's daemons among them); shells run the trial's own commands
    before = _procs({(1, "systemd"): (100, 0, 0), (20, "bash"): (5, 0, 1)})
    after = _procs({(1, "systemd"): (101, 5000, 0), (20, "bash"): (5, 5000, 1)})
    assert heavy_processes(before, after, 10.0) == []
    # a new process's reaped children all ended during the trial
    assert [(c, p) for c, p, _ in heavy_processes(_procs({}), _procs({(30, "xargs"): (1, 800, 20)}), 10.0)] == [
        ("xargs", 30)]
