"""Inputs refused before they cost anything: a file past the size cap, a cluster of too many hosts, and values
carrying a newline shown escaped so they cannot forge a line of output."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from gluster_model.config.cluster import MAX_HOSTS, ClusterFile, cluster_from_data, load_cluster
from gluster_model.errors import ConfigError
from gluster_model.config.yamlio import MAX_INPUT_BYTES


def test_a_file_past_the_size_cap_is_refused_before_it_is_read(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "huge.yaml"
    with big.open("w") as fh:
        fh.write("name: c\nservers:\n")
        while fh.tell() <= MAX_INPUT_BYTES:
            fh.write("".join(f"  - host: 10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}\n" for i in range(20000)))
    # refused before a byte is read (not by timing it: a busy machine makes any clock limit flaky)
    monkeypatch.setattr(Path, "read_text", lambda *a, **k: pytest.fail("the file was read"))
    with pytest.raises(ConfigError, match=r"huge.yaml: is \d+\.\d MB; glmodel's input files are at most 4 MB"):
        load_cluster(big)


def test_a_cluster_of_too_many_hosts_is_refused_before_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"name": "c", "servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]}] * (MAX_HOSTS + 1)}
    # refused before validation (which would take minutes at hundreds of thousands), not by timing it
    monkeypatch.setattr(ClusterFile, "model_validate", lambda *a, **k: pytest.fail("the entries were validated"))
    with pytest.raises(ConfigError, match=f"c.yaml: servers: {MAX_HOSTS + 1:,} entries; a cluster file holds at most"):
        cluster_from_data(data, "c.yaml", Path("."))


def test_a_newline_in_a_value_is_shown_escaped_on_one_line(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text('name: c\nservers:\n  - host: "10.0.0.1\\nglmodel: all checks passed"\n    brick_paths: [/b]\n')
    done = subprocess.run([sys.executable, "-m", "gluster_model.cli", "check", "--cluster", str(f)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "10.0.0.1\\nglmodel: all checks passed" in done.stderr, done.stderr


def test_an_alias_bomb_is_refused_quickly_in_one_short_line(tmp_path: Path) -> None:
    """Seven lines that expand to 9^7 values through aliases: refused by their expanded size, in well under a
    second and one line, not after minutes with a message of megabytes."""
    import time

    from click.testing import CliRunner

    from gluster_model.cli import cli

    levels = ["a: &a [" + ", ".join(['"x"'] * 9) + "]"]
    for prev, name in zip("abcdef", "bcdefg"):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    plan = tmp_path / "bomb.yaml"
    plan.write_text("name: bomb\n" + "\n".join(levels) + "\nfactors:\n  link: *g\n")
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["collect", "--cluster", str(tmp_path / "none.yaml"), "--plan", str(plan),
                                      "--dry-run"])
    from gluster_model.config.yamlio import parse_yaml
    from gluster_model.errors import ConfigError

    try:
        parse_yaml(plan.read_text(), str(plan))
    except ConfigError as exc:
        message = str(exc)
    else:
        raise AssertionError("an alias bomb was parsed")
    assert "expands to more than 200,000 values" in message and len(message) < 300
    assert time.monotonic() - started < 30  # generous: the point is seconds, not the 14 s and 92 MB of before
    assert result.exit_code != 0


def test_a_long_value_is_named_not_echoed_whole() -> None:
    from gluster_model.text import capped

    line = capped("servers[0].host: '" + "h" * 5000 + "' is not a host name")
    assert len(line) < 300 and "(5,002 characters)" in line and line.endswith("is not a host name")
