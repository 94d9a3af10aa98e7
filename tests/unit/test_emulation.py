"""Emulated hardware on any cluster: the undo record is written before the change, runs once, and quotes
everything; faster-than-the-NIC settings are refused (pure builders; the shell logic runs in a local sh)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gluster_model.config.cluster import cluster_from_data
from gluster_model.emulation import (EmulationError, Nic, apply_script, link_plan, record_path, restore_script,
                                     status_script)


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
    assert _sh(status_script(record)) == "2"
    assert _sh(restore_script(record)) == "restored 2"
    assert marks.read_text().splitlines() == ["undone-1", "undone; 2"] and not Path(record).exists()
    assert _sh(restore_script(record)) == "none" and _sh(status_script(record)) == "0"  # idempotent
    assert marks.read_text().count("undone") == 2


def test_a_change_runs_after_its_record(tmp_path: Path) -> None:
    record = str(tmp_path / "r" / "x.undo")
    done = tmp_path / "done"
    _sh(apply_script(record, [["true"]], [["touch", str(done)]]))
    assert done.exists() and Path(record).read_text() == "true\n"


def test_link_settings_only_slow_a_nic_down() -> None:
    nic = Nic("10.0.0.2", "eno1", 1000)
    undo, do = link_plan(nic, 300 * 10**6)
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
