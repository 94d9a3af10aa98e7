"""Inputs refused before they cost anything: a file past the size cap, a cluster of too many hosts, and values
carrying a newline shown escaped so they cannot forge a line of output."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from gluster_model.config.cluster import MAX_HOSTS, cluster_from_data, load_cluster
from gluster_model.errors import ConfigError
from gluster_model.config.yamlio import MAX_INPUT_BYTES


def test_a_file_past_the_size_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "huge.yaml"
    with big.open("w") as fh:
        fh.write("name: c\nservers:\n")
        while fh.tell() <= MAX_INPUT_BYTES:
            fh.write("".join(f"  - host: 10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}\n" for i in range(20000)))
    started = time.monotonic()
    with pytest.raises(ConfigError, match=r"huge.yaml: is \d+\.\d MB; glmodel's input files are at most 4 MB"):
        load_cluster(big)
    assert time.monotonic() - started < 1.0


def test_a_cluster_of_too_many_hosts_is_refused_before_validation() -> None:
    data = {"name": "c", "servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]}] * (MAX_HOSTS + 1)}
    started = time.monotonic()
    with pytest.raises(ConfigError, match=f"c.yaml: servers: {MAX_HOSTS + 1:,} entries; a cluster file holds at most"):
        cluster_from_data(data, "c.yaml", Path("."))
    assert time.monotonic() - started < 0.5


def test_a_newline_in_a_value_is_shown_escaped_on_one_line(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text('name: c\nservers:\n  - host: "10.0.0.1\\nglmodel: all checks passed"\n    brick_paths: [/b]\n')
    done = subprocess.run([sys.executable, "-m", "gluster_model.cli", "check", "--cluster", str(f)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "10.0.0.1\\nglmodel: all checks passed" in done.stderr, done.stderr
