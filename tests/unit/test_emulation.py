"""Emulated hardware on any cluster: the undo record is written before the change, runs once, and quotes
everything; faster-than-the-NIC settings are refused (pure builders; the shell logic runs in a local sh)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from gluster_model.config.cluster import cluster_from_data
from gluster_model.hardware.emulation import (EmulationError, Nic, apply_script, describe_record, link_plan, record_path,
                                     restore_script, status_script)


def _sh(script: str) -> str:
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout.strip()


def test_the_record_is_written_before_the_change_and_restore_runs_it_once(tmp_path: Path) -> None:
    record = str(tmp_path / "it's here" / "emulation-10.0.0.1.undo")  # a quote and a space in the path
    marks = tmp_path / "marks"
    undo = [["sh", "-c", f"echo undone-1 >> '{marks}'"], ["sh", "-c", f"echo 'undone; 2' >> '{marks}'"]]
    # The change fails: the record of how to undo it is there all the same (written first).
    failed = subprocess.run(["sh", "-c", apply_script(record, undo, [["false"]])], capture_output=True)
    assert failed.returncode != 0 and Path(record).is_file()
    assert oct(Path(record).parent.stat().st_mode & 0o777) == "0o700"  # root's alone: restore executes it
    count, words = describe_record(_sh(status_script(record)))
    assert count == 2 and words == ""
    assert _sh(restore_script(record)) == "restored 2"
    assert marks.read_text().splitlines() == ["undone-1", "undone; 2"] and not Path(record).exists()
    assert _sh(restore_script(record)) == "none" and _sh(status_script(record)) == ""  # idempotent
    assert marks.read_text().count("undone") == 2


def test_check_says_how_late_a_running_delayer_has_been(tmp_path: Path) -> None:
    """A record whose delay's delayer is running: its status (``delayer.write_status``) is read with the record
    and said beside the delay, not counted as an undo command; a garbled or missing status says nothing more."""
    from gluster_model.hardware import delayer
    from gluster_model.hardware.knobs.latency import status_words

    record = tmp_path / "emulation-10.0.0.1.undo"
    record.write_text("iptables -D INPUT -i eth0 -j NFQUEUE --queue-num 27182 --queue-bypass")  # no newline
    status = tmp_path / "emulation-10.0.0.1.delayer.status"
    late = delayer.Lateness()
    for s in (0.00005, 0.00006):
        late.add(s)
    delayer.write_status(str(status), late, 1000)
    count, words = describe_record(_sh(status_script(str(record), str(status))))
    assert (count, words) == (1, "packet delay on eth0 (held 1ms, 55 us late a packet on average over 2)")
    status.write_text("{not json")
    assert describe_record(_sh(status_script(str(record), str(status)))) == (1, "packet delay on eth0")
    assert describe_record(_sh(status_script(str(record), str(tmp_path / "gone")))) == (1, "packet delay on eth0")
    assert status_words('{"delay_us": 500}') == ""


def test_a_change_runs_after_its_record(tmp_path: Path) -> None:
    record = str(tmp_path / "r" / "x.undo")
    done = tmp_path / "done"
    _sh(apply_script(record, [["true"]], [["touch", str(done)]]))
    assert done.exists() and Path(record).read_text() == "true\n"


def test_link_settings_only_slow_a_nic_down() -> None:
    nic = Nic("10.0.0.2", "eno1", 1000)
    undo, do, rate = link_plan(nic, 300 * 10**6)
    assert rate == 300 * 10**6
    assert ["tc", "qdisc", "del", "dev", "eno1", "root"] in undo
    assert ["tc", "qdisc", "add", "dev", "eno1", "root", "handle", "1:", "htb", "default", "10"] in do
    with pytest.raises(EmulationError, match=r"10\.0\.0\.2: 10gbit is faster than its NIC eno1 \(1gbit\)"):
        link_plan(nic, 10**10)
    assert link_plan(Nic("10.0.0.3", "eth0", None), 10**10)[1]  # a speed the host does not report: allowed


def test_each_host_has_its_own_record_under_the_configured_directory() -> None:
    spec = cluster_from_data({"name": "c", "emulation": {"allow": True, "record_dir": "/var/lib/glm/"},
                              "servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]},
                                          {"host": "10.0.0.2", "brick_paths": ["/b"]}]}, "c.yaml", Path("."))
    assert [record_path(spec, h) for h in spec.hosts] == ["/var/lib/glm/emulation-10.0.0.1.undo",
                                                         "/var/lib/glm/emulation-10.0.0.2.undo"]
    off = cluster_from_data({"name": "c", "servers": [{"host": "h", "brick_paths": ["/b"]}]}, "c.yaml", Path("."))
    assert off.emulation.allow is False  # opt-in


def test_a_bad_record_dir_is_refused_naming_the_field() -> None:
    from gluster_model.errors import ConfigError

    with pytest.raises(ConfigError, match="emulation.record_dir"):
        cluster_from_data({"name": "c", "emulation": {"allow": True, "record_dir": "rel/$(reboot)"},
                           "servers": [{"host": "h", "brick_paths": ["/b"]}]}, "c.yaml", Path("."))


# --- disks: the device under a brick, the throttle's commands, the refusals -----------------------------------

# Output of `devices_script` as captured on this project's VM (a brick on the root disk, one on tmpfs), and lines
# of the same shape for what sysfs shows on hosts with a partition, LVM and md under the bricks.
CAPTURED = """cgroup=v1
brick=/work/main/x/y\tmm=254:0\tfs=ext4\tsrc=/dev/vda\ttop=254:0\tpart=0\tname=vda\tdm=\tslaves=\tdev=/dev/vda
brick=/dev/shm/q\tmm=0:23\tfs=tmpfs\tsrc=tmpfs\ttop=\tpart=0\tname=\tdm=\tslaves=\tdev=
"""
SHAPES = """cgroup=v1
brick=/bricks/a\tmm=8:1\tfs=xfs\tsrc=/dev/sda1\ttop=8:0\tpart=1\tname=sda\tdm=\tslaves=\tdev=/dev/sda
brick=/gluster_bricks/engine/engine\tmm=253:3\tfs=xfs\tsrc=/dev/mapper/gluster_vg_sdb-gluster_lv_engine\ttop=253:3\tpart=0\tname=dm-3\tdm=gluster_vg_sdb-gluster_lv_engine\tslaves=dm-2,\tdev=/dev/dm-3
brick=/bricks/c\tmm=9:0\tfs=ext4\tsrc=/dev/md0\ttop=9:0\tpart=0\tname=md0\tdm=\tslaves=sdc,sdd,\tdev=/dev/md0
brick=/bricks/a2\tmm=8:1\tfs=xfs\tsrc=/dev/sda1\ttop=8:0\tpart=1\tname=sda\tdm=\tslaves=\tdev=/dev/sda
"""


def test_the_device_under_each_brick_is_found_through_partitions_lvm_and_md() -> None:
    from gluster_model.hardware.disk import parse_devices, targets, unthrottlable

    cgroup, devs = parse_devices(SHAPES)
    assert cgroup == "v1"
    assert [(d.throttle, d.via) for d in devs] == [
        ("8:0", "partition of sda"), ("253:3", "LVM/device-mapper gluster_vg_sdb-gluster_lv_engine on dm-2"),
        ("9:0", "md on sdc,sdd"), ("8:0", "partition of sda")]
    assert list(targets(devs)) == ["8:0", "253:3", "9:0"]  # two bricks on one disk: one throttle
    assert unthrottlable(devs) is None
    _, real = parse_devices(CAPTURED)
    assert real[0].throttle == "254:0" and real[0].dev == "/dev/vda"
    assert unthrottlable(real) is real[1]
    with pytest.raises(ValueError, match="not a block device number"):
        parse_devices("brick=/b\tmm=1:2\ttop=1:2;reboot\n")
    with pytest.raises(ValueError, match="unexpected line"):
        parse_devices("Permission denied\n")


def test_the_devices_script_runs_here_and_finds_this_machine_s_disk(tmp_path: Path) -> None:
    """The script itself, on real sysfs: the test's directory lies on a block device (its throttle target is a
    whole device), /dev/shm on none."""
    from gluster_model.hardware.disk import devices_script, parse_devices

    out = _sh(devices_script([str(tmp_path / "not made yet" / "brick"), "/dev/shm"]))
    cgroup, (here, shm) = parse_devices(out)
    assert cgroup in ("v1", "v2", "none")
    assert here.brick.endswith("not made yet/brick") and shm.throttle is None and shm.fstype == "tmpfs"
    if here.throttle is not None:
        assert Path(f"/sys/dev/block/{here.throttle}").exists()
        assert not Path(f"/sys/dev/block/{here.throttle}/partition").exists()  # whole devices only


def test_dd_summaries_are_read_as_bytes_per_second() -> None:
    from gluster_model.hardware.disk import parse_probe

    text = ("read: 134217728 bytes (134 MB, 128 MiB) copied, 0.0712 s, 1.9 GB/s\n"
            "write: 134217728 bytes (134 MB, 128 MiB) copied, 1,342 s, 100 MB/s\n")
    got = parse_probe(text)
    assert got["read"] == pytest.approx(134217728 / 0.0712) and got["write"] == pytest.approx(134217728 / 1.342)
    assert parse_probe("read: dd: failed to open '/dev/x': No such file or directory\nwrite: \n") == {}


def test_throttle_entries_are_written_and_removed_as_the_kernel_reads_them(tmp_path: Path) -> None:
    from gluster_model.hardware.disk import v1_argv

    root = tmp_path / "blk io"  # a space: every path quoted
    root.mkdir()
    for argv in v1_argv("8:0", {"read_bps": 60_000_000, "write_bps": 30_000_000}, root=str(root)):
        subprocess.run(argv, check=True)
    assert (root / "blkio.throttle.read_bps_device").read_text() == "8:0 60000000\n"
    assert (root / "blkio.throttle.write_iops_device").read_text() == "8:0 0\n"
    for argv in v1_argv("8:0", {}, root=str(root)):
        subprocess.run(argv, check=True)
    assert (root / "blkio.throttle.read_bps_device").read_text() == "8:0 0\n"
    with pytest.raises(ValueError):
        v1_argv("8:0; reboot", {})


def test_disk_settings_are_refused_in_one_line_naming_host_brick_and_figure() -> None:
    from gluster_model.hardware.emulation import disk_plan
    from gluster_model.hardware.disk import parse_devices

    _, devs = parse_devices(SHAPES)
    undo, do, words = disk_plan("10.0.0.2", "v1", devs, {"read_bps": 60_000_000},
                         {"8:0": {"read": 180e6, "write": 150e6}, "253:3": {"read": 500e6}, "9:0": {}})
    assert len(do) == len(undo) == 12  # three devices, four entries each
    assert words.startswith("disk sda (partition of sda) r 60MB/s, w unlimited; disk dm-3 (LVM/device-mapper")
    assert any("8:0 60000000" in " ".join(a) for a in do) and all(" 0 >" in a[-1] or " 0'" in a[-1] for a in undo)
    with pytest.raises(EmulationError, match=r"^10\.0\.0\.2: disk read 200MB/s is faster than its brick device sda "
                                             r"\(partition of sda\) measured just now \(180MB/s\)"):
        disk_plan("10.0.0.2", "v1", devs, {"read_bps": 200_000_000}, {"8:0": {"read": 180e6}})
    _, real = parse_devices(CAPTURED)
    with pytest.raises(EmulationError, match=r"brick /dev/shm/q is on tmpfs \(tmpfs, device 0:23\), not a block"):
        disk_plan("10.0.0.3", "v1", real, {"read_bps": 10**7}, {})
    with pytest.raises(EmulationError, match="cgroup v2 host"):
        disk_plan("10.0.0.4", "v2", devs[:1], {"read_bps": 10**7}, {})


def test_a_disk_setting_on_a_cluster_probes_then_records_then_throttles() -> None:
    """The whole flow on a recording executor: every host looked at before any is changed, the probe's figure
    checked, the record written in the same command before the throttle, clients (no bricks) left alone."""
    from ..fakes import FakeExecutor

    from gluster_model.hardware.emulation import apply_hardware

    spec = cluster_from_data({"name": "c", "emulation": {"allow": True},
                              "servers": [{"host": "10.0.0.1", "brick_paths": ["/bricks/a", "/bricks/a2"]}],
                              "clients": [{"host": "10.0.0.9"}]}, "c.yaml", Path("."))
    ex = FakeExecutor(cluster=spec)
    ex.on("findmnt", "cgroup=v1\n" + SHAPES.splitlines()[1] + "\n" + SHAPES.splitlines()[4] + "\n")
    ex.on("glmodel-probe", "read: 134217728 bytes (134 MB, 128 MiB) copied, 1.0 s, 134 MB/s\n"
                           "write: 134217728 bytes (134 MB, 128 MiB) copied, 1.0 s, 134 MB/s\n")
    done = apply_hardware(ex, {"disk_read": 60_000_000, "disk_write": 60_000_000})
    assert done == {"10.0.0.1": "disk sda (partition of sda) 60MB/s"}
    assert ex.ran("findmnt") == ["10.0.0.1"] and ex.ran("glmodel-probe") == ["10.0.0.1"]
    (applied,) = [c for h, c in ex.calls if "blkio.throttle" in c and ">>" in c]
    assert applied.index(">> ") < applied.index("8:0 60000000")  # recorded first
    with pytest.raises(EmulationError, match=r"10\.0\.0\.1: disk write 200MB/s is faster .* \(134.2MB/s\)"):
        apply_hardware(ex, {"disk_write": 200_000_000})


def test_what_a_record_puts_back_is_said_in_words() -> None:
    """What `glmodel check` shows of a host's record: the NIC shaped and the devices throttled."""
    from gluster_model.hardware.emulation import apply_script, disk_plan
    from gluster_model.hardware.disk import parse_devices

    undo = link_plan(Nic("10.0.0.2", "eno1", None), 300 * 10**6)[0]
    undo += disk_plan("10.0.0.2", "v1", parse_devices(SHAPES)[1][:2], {"read_bps": 10**7}, {})[0]
    from gluster_model.hardware.group import undo_argv

    undo += undo_argv("10.0.0.2", "/r/o", "/r/j")
    script = apply_script("/tmp/never-written", undo, [])
    record = "\n".join(shlex.join(argv) for argv in undo) + "\n"
    assert shlex.quote(shlex.join(undo[0])) in script  # the record holds exactly these lines
    assert describe_record(record) == (15, "link shaping on eno1; disk throttle on 8:0, 253:3; RAM/CPU group "
                                           "glmodel-emu-10-0-0-2")
    assert describe_record("") == (0, "")


# --- RAM and CPU: a group per host, joined by every command glmodel runs there -------------------------------

def test_a_host_group_is_made_filled_and_removed_by_the_record() -> None:
    from gluster_model.hardware.group import apply_argv, group_name, parse_facts, undo_argv
    from gluster_model.remote.executor import join_prefix

    assert group_name("10.213.1.2") == "glmodel-emu-10-213-1-2" and group_name("a;b c") == "glmodel-emu-a-b-c"
    assert parse_facts("cgroup=v1\nmemtotal=8048576\nnproc=4\n") == ("v1", 8048576 * 1024, 4)
    assert parse_facts("garbage") == ("none", None, None)
    do = [shlex.join(a) for a in apply_argv("10.0.0.2", 512 << 20, 0.5, "/r/o", "/r/j")]
    assert "drop_caches" in do[0]  # before a limit, so no page stays charged to another group
    mem = next(c for c in do if "memory.limit_in_bytes" in c)
    assert f"echo {512 << 20} > /sys/fs/cgroup/memory/glmodel-emu-10-0-0-2/memory.limit_in_bytes" in mem
    assert any("cpu.cfs_quota_us" in c and "echo 50000 >" in c for c in do)
    moves = [c for c in do if "pgrep -x" in c]
    assert len(moves) == 2 and all(c.index(">> /r/o") < c.index("/cgroup.procs; done") for c in moves)  # origin first
    assert "/r/j" in do[-1] and "glmodel-emu-10-0-0-2/cgroup.procs" in do[-1]
    assert [shlex.join(a) for a in apply_argv("10.0.0.2", None, 1.0, "/r/o", "/r/j")][0].startswith("mkdir -p "
                                                                                                 "/sys/fs/cgroup/cpu/")
    undo = [shlex.join(a) for a in undo_argv("10.0.0.2", "/r/o", "/r/j")]
    assert undo[0] == "rm -f /r/j" and undo[-1] == "rm -f /r/o"  # no command joins a group being removed
    assert all("rmdir" in u for u in undo[1:3])
    assert join_prefix("/var/lib/glmodel/x y.join") == ("if [ -f '/var/lib/glmodel/x y.join' ]; then . "
                                                         "'/var/lib/glmodel/x y.join'; fi; ")


def test_the_join_file_moves_the_shell_that_sources_it(tmp_path: Path) -> None:
    """The join file's text, sourced by a shell, writes that shell's pid where the group's tasks go."""
    from gluster_model.remote.executor import join_prefix

    procs = tmp_path / "cgroup.procs"
    join = tmp_path / "j"
    join.write_text(f"echo $$ > {shlex.quote(str(procs))} 2>/dev/null\n")
    pid = _sh(join_prefix(str(join)) + "echo $$")
    assert procs.read_text().strip() == pid
    join.unlink()
    assert _sh(join_prefix(str(join)) + "echo ran") == "ran"  # no join file: the command runs as it is


def test_a_device_measurement_joins_the_host_group_for_ram_and_stays_out_of_its_cpu_quota(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The join file apply_argv writes, sourced by a shell: an ordinary command's pid goes to the memory and the
    cpu group; a device's measurement (fio, iperf3: ``join_prefix(device=True)``) to the memory group only."""
    from gluster_model.hardware import group
    from gluster_model.remote.executor import join_prefix

    for ctl in ("memory", "cpu"):
        monkeypatch.setitem(group.V1_ROOTS, ctl, str(tmp_path / ctl))
        (tmp_path / ctl / "glmodel-emu-10-0-0-2").mkdir(parents=True)
    join = tmp_path / "j"
    write_join = group.apply_argv("10.0.0.2", 512 << 20, 0.5, str(tmp_path / "o"), str(join))[-1]
    subprocess.run(write_join, check=True)
    procs = {ctl: tmp_path / ctl / "glmodel-emu-10-0-0-2" / "cgroup.procs" for ctl in ("memory", "cpu")}
    pid = _sh(join_prefix(str(join)) + "echo $$")
    assert {c: f.read_text().strip() for c, f in procs.items()} == {"memory": pid, "cpu": pid}
    for f in procs.values():
        f.unlink()
    pid = _sh(join_prefix(str(join), device=True) + "echo $$")
    assert procs["memory"].read_text().strip() == pid and not procs["cpu"].exists()


def test_on_cgroup_v2_a_device_measurement_joins_a_group_beside_the_host_s_without_its_cpu_limit(
        tmp_path: Path) -> None:
    """One v2 group holds every controller: the device group beside it gets every limit but cpu.max, a device's
    measurement joins it, and undo removes both; with only a CPU limit a measurement joins no group at all."""
    from gluster_model.hardware.group import device_group, group_name, v2_apply_argv, v2_undo_argv
    from gluster_model.remote.executor import join_prefix

    root = tmp_path / "unified"
    limits = {"cpu.max": ["50000 100000"], "io.max": ["7:0 riops=400 wiops=400"], "memory.max": ["536870912"]}
    do = v2_apply_argv("10.0.0.2", str(root), limits, str(tmp_path / "o"), str(tmp_path / "j"), str(tmp_path / "e"))
    text = [a[-1] for a in do]
    main, dev = root / group_name("10.0.0.2"), root / device_group("10.0.0.2")
    for name, lines in limits.items():
        assert any(f"echo {shlex.quote(lines[0])} > {main}/{name}" in t for t in text), name
        assert any(f"> {dev}/{name}" in t for t in text) == (name != "cpu.max"), name
    main.mkdir(parents=True)
    dev.mkdir()
    subprocess.run(do[-1], check=True)  # the join file
    pid = _sh(join_prefix(str(tmp_path / "j")) + "echo $$")
    assert (main / "cgroup.procs").read_text().strip() == pid and not (dev / "cgroup.procs").exists()
    pid = _sh(join_prefix(str(tmp_path / "j"), device=True) + "echo $$")
    assert (dev / "cgroup.procs").read_text().strip() == pid
    undo = [shlex.join(a) for a in v2_undo_argv("10.0.0.2", str(root), str(tmp_path / "o"), str(tmp_path / "e"))]
    assert [u for u in undo if "rmdir" in u] == [u for u in undo if f"rmdir {main};" in u or f"rmdir {dev};" in u]
    assert sum("rmdir" in u for u in undo) == 2

    only_cpu = v2_apply_argv("10.0.0.3", str(root), {"cpu.max": ["50000 100000"]}, str(tmp_path / "o3"),
                             str(tmp_path / "j3"), str(tmp_path / "e3"))
    assert not any(device_group("10.0.0.3") in a[-1] for a in only_cpu)
    (root / group_name("10.0.0.3")).mkdir()
    subprocess.run(only_cpu[-1], check=True)
    _sh(join_prefix(str(tmp_path / "j3"), device=True) + "echo $$")
    assert not (root / group_name("10.0.0.3") / "cgroup.procs").exists()
    no_cpu = v2_apply_argv("10.0.0.4", str(root), {"io.max": ["7:0 riops=400"]}, str(tmp_path / "o4"),
                           str(tmp_path / "j4"), str(tmp_path / "e4"))
    (root / group_name("10.0.0.4")).mkdir()
    subprocess.run(no_cpu[-1], check=True)
    pid = _sh(join_prefix(str(tmp_path / "j4"), device=True) + "echo $$")
    assert (root / group_name("10.0.0.4") / "cgroup.procs").read_text().strip() == pid  # its disk limit holds it


def test_ram_and_cpu_beyond_the_host_are_refused_naming_it() -> None:
    from gluster_model.hardware.emulation import group_plan

    spec = cluster_from_data({"name": "c", "emulation": {"allow": True},
                              "servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]}]}, "c.yaml", Path("."))
    undo, do, words = group_plan(spec, "10.0.0.1", ("v1", 4 << 30, 2), 1 << 30, 0.5)
    assert words == "RAM 1GB; CPU 0.5 core(s)"
    assert any("emulation-10.0.0.1.join" in shlex.join(a) for a in undo)
    with pytest.raises(EmulationError, match=r"^10\.0\.0\.1: RAM 8GB is more than the host has \(4\.0 GiB\)"):
        group_plan(spec, "10.0.0.1", ("v1", 4 << 30, 2), 8 << 30, None)
    with pytest.raises(EmulationError, match=r"^10\.0\.0\.1: CPU 4 core\(s\) is more than the host has \(2\)"):
        group_plan(spec, "10.0.0.1", ("v1", 4 << 30, 2), None, 4.0)
    with pytest.raises(EmulationError, match="cgroup v2 host"):
        group_plan(spec, "10.0.0.1", ("v2", 4 << 30, 2), 1 << 30, None)


def test_iozone_children_join_the_host_group_only_where_emulation_is_allowed(tmp_path: Path) -> None:
    from gluster_model.bench.iozone import rsh_wrapper

    data = {"name": "c", "servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]}]}
    plain = cluster_from_data(data, "c.yaml", Path("."))
    allowed = cluster_from_data({**data, "emulation": {"allow": True, "record_dir": "/var/lib/g"}}, "c.yaml", Path("."))
    assert plain.join_file("10.0.0.1") is None and "emulation-" not in rsh_wrapper(plain, list(plain.hosts))
    wrapper = tmp_path / "rsh"
    wrapper.write_text(rsh_wrapper(allowed, list(allowed.hosts), ssh="echo"))
    # iozone runs `RSH host -n 'iozone -+s ...'`: ssh gets its option, the host, then the join prefix, then the
    # command, so the remote shell joins the group first and -n stays ssh's
    out = subprocess.run(["sh", str(wrapper), "10.0.0.1", "-n", "/usr/bin/iozone -+s"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip().endswith(" -n 10.0.0.1 if [ -f /var/lib/g/emulation-10.0.0.1.join ]; then . "
                                "/var/lib/g/emulation-10.0.0.1.join; fi;  /usr/bin/iozone -+s"), out
    plain_out = subprocess.run(["sh", str(wrapper), "10.0.0.1", "iozone"], capture_output=True, text=True,
                               check=True).stdout
    assert plain_out.strip().endswith("10.0.0.1 if [ -f /var/lib/g/emulation-10.0.0.1.join ]; then . "
                                      "/var/lib/g/emulation-10.0.0.1.join; fi;  iozone"), plain_out


def test_shares_are_taken_of_what_each_host_has() -> None:
    from gluster_model.hardware.emulation import Share, disk_plan, group_plan, parse_share
    from gluster_model.hardware.disk import parse_devices

    assert parse_share("50%") == Share(0.5) and parse_share("100%") is None and str(Share(0.25)) == "25%"
    for bad in ("0%", "120%", "half"):
        with pytest.raises(ValueError):
            parse_share(bad)
    # link: of the NIC's reported speed, else of the cluster file's label, else refused naming the host
    assert link_plan(Nic("h", "eno1", 10_000), Share(0.25))[2] == 2_500_000_000
    assert link_plan(Nic("h", "eth0", None), Share(0.5), labelled_gbps=1.0)[2] == 500_000_000
    with pytest.raises(EmulationError, match=r"^h: its NIC eth0 reports no speed to take 50% of; set "
                                             r"hardware.network.gbps"):
        link_plan(Nic("h", "eth0", None), Share(0.5))
    # disk: of what each device measured just before
    _, devs = parse_devices(SHAPES)
    _, do, words = disk_plan("h", "v1", devs[:1], {"read_bps": Share(0.5), "write_bps": Share(0.25)},
                             {"8:0": {"read": 200e6, "write": 120e6}})
    assert words == "disk sda (partition of sda) r 100MB/s, w 30MB/s"
    text = " ".join(shlex.join(a) for a in do)
    assert "8:0 100000000" in text and "8:0 30000000" in text
    with pytest.raises(EmulationError, match="no measured read IOPS of sda to take 50% of"):
        disk_plan("h", "v1", devs[:1], {"read_iops": Share(0.5)}, {"8:0": {"read": 200e6}})
    # RAM and CPU: of the host's own
    spec = cluster_from_data({"name": "c", "emulation": {"allow": True},
                              "servers": [{"host": "h", "brick_paths": ["/b"]}]}, "c.yaml", Path("."))
    _, do, words = group_plan(spec, "h", ("v1", 8 << 30, 4), Share(0.25), Share(0.5))
    assert words == "RAM 2GB; CPU 2 core(s)"
    assert any(f"echo {2 << 30} >" in shlex.join(a) for a in do) and any("echo 200000 >" in shlex.join(a) for a in do)


def test_a_link_and_a_stepped_knob_on_one_host_are_both_said() -> None:
    """A setting of the link and the MTU together: the host's words name both (the link's once replaced the
    MTU's), and the undo puts back the MTU the host had as well as taking the shaping away."""
    from ..fakes import FakeExecutor

    from gluster_model.hardware.emulation import _host_plan

    spec = cluster_from_data({"name": "c", "emulation": {"allow": True},
                              "servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]}]}, "c.yaml", Path("."))
    ex = FakeExecutor(cluster=spec)
    ex.on(r"getent ahostsv4", "dev=eno1\nmtu=1500\nspeed=10000\n")
    ex.on(r"tc qdisc show", "qdisc: qdisc noqueue 0: root refcnt 2\nstep mtu: 1500\n")
    undo, do, words = _host_plan(ex, "10.0.0.1", 10**9, {}, None, None, {"mtu": 9000})
    assert "mtu 9000 (was 1500)" in words and "NIC eno1 1gbit" in words, words
    assert ["ip", "link", "set", "dev", "eno1", "mtu", "1500"] in undo and ["ip", "link", "set", "dev", "eno1", "mtu",
                                                                          "9000"] in do
