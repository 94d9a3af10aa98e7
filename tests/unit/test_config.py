"""Cluster files and inventories: what is accepted, how it resolves, and a corpus of files that must be refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gluster_model.cli import cli
from gluster_model.config.cluster import load_cluster
from gluster_model.errors import ConfigError
from pydantic import ValidationError

DATA = Path(__file__).parent.parent / "data"
BAD = sorted((DATA / "bad_clusters").iterdir())


def expectation(path: Path) -> str:
    if path.name == "29-not-utf8.yaml":
        return "not a UTF-8 text file"
    first = path.read_text().splitlines()[0] if path.read_text().strip() else ""
    assert first.startswith("# expect: "), f"{path.name} lacks its '# expect:' line"
    return first.removeprefix("# expect: ")


def test_corpus_is_large_enough() -> None:
    assert len(BAD) >= 15


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_bad_cluster_refused_with_one_line(path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_cluster(path)
    message = str(info.value)
    assert message.startswith(str(path) + ": "), message
    assert expectation(path) in message
    assert "\n" not in message


@pytest.mark.parametrize("path", BAD[:6] + BAD[-4:], ids=[p.name for p in BAD[:6] + BAD[-4:]])
def test_cli_prints_one_line_and_no_traceback(path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "--cluster", str(path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"glmodel: error: {path}: ")
    assert "Traceback" not in result.output


def test_missing_file_is_one_line() -> None:
    result = CliRunner().invoke(cli, ["check", "--cluster", "/nonexistent/cluster.yaml"])
    assert result.exit_code == 2
    assert result.output.strip() == "glmodel: error: /nonexistent/cluster.yaml: file not found"


def test_full_cluster_resolves_defaults_and_overrides() -> None:
    spec = load_cluster(DATA / "clusters" / "full.yaml")
    assert spec.name == "fist"
    assert [h.address for h in spec.servers] == ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
    assert [h.address for h in spec.clients] == ["10.0.0.1", "client9.example.org"]
    h1, h2, h3, c9 = spec.hosts
    assert h1.name == "fist1" and h1.roles == {"server", "client"}
    assert h1.brick_paths == ("/data/brick1",) and h2.brick_paths == ("/data/brick1", "/data/brick2")
    assert h2.hardware.base_filesystem == "xfs" and h1.hardware.base_filesystem == "ext4"
    assert h3.ssh.port == 2200 and h3.ssh.user == "gluster" and h1.ssh.port == 22
    # Relative local paths resolve against the cluster file's directory.
    assert h1.ssh.identity_file == (DATA / "clusters" / "id_test").resolve()
    assert h1.ssh.known_hosts == (DATA / "clusters" / "known_hosts").resolve()
    assert c9.roles == {"client"} and c9.brick_paths == ()
    assert c9.hardware.network is not None and c9.hardware.network.gbps == 40
    assert h1.mount_root == "/mnt/gl"


def test_clients_default_to_servers(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("servers:\n  - {host: a.example, brick_paths: [/b]}\n  - {host: b.example, brick_paths: [/b]}\n")
    spec = load_cluster(f)
    assert all(h.roles == {"server", "client"} for h in spec.hosts)


def test_spec_is_frozen() -> None:
    spec = load_cluster(DATA / "clusters" / "full.yaml")
    with pytest.raises(ValidationError, match="frozen"):
        spec.raw.servers[0].host = "evil"  # type: ignore[misc]


def test_ini_inventory() -> None:
    spec = load_cluster(DATA / "clusters" / "inventory.ini")
    store1, store2, node7 = spec.hosts
    assert (store1.address, store1.name) == ("10.1.0.1", "store1")
    assert store1.brick_paths == ("/bricks/a", "/bricks/b")  # host variable beats group variable
    assert store2.brick_paths == ("/bricks/a",) and store2.ssh.port == 2222
    assert store1.hardware.base_filesystem == "xfs"
    assert node7.roles == {"client"} and node7.ssh.user == "bench" and store1.ssh.user == "root"
    assert node7.hardware.network is not None and node7.hardware.network.gbps == 10
    assert store1.ssh.identity_file == (DATA / "clusters" / "id_test").resolve()


def test_yaml_inventory_host_in_both_groups() -> None:
    spec = load_cluster(DATA / "clusters" / "inventory.yaml")
    s1 = spec.host("s1")
    assert s1.address == "192.168.5.1" and s1.roles == {"server", "client"}
    assert s1.brick_paths == ("/srv/brick",)
    assert spec.host("s2").ssh.port == 2022
    assert spec.host("c1").roles == {"client"}


def test_ipv6_host_is_normalised(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("servers:\n  - {host: '2001:db8::0001', brick_paths: [/b]}\n")
    assert load_cluster(f).hosts[0].address == "2001:db8::1"


def test_a_gluster_ansible_hyperconverged_inventory_loads_as_it_is() -> None:
    spec = load_cluster(DATA / "clusters" / "gluster_ansible_hc.yml")
    assert [(h.name, h.address) for h in spec.servers] == [("host1", "10.20.0.11"), ("host2", "10.20.0.12"),
                                                            ("host3", "10.20.0.13")]
    assert [h.name for h in spec.clients] == ["host1", "host2", "host3"]  # hyperconverged: every node mounts
    bricks = {h.name: h.brick_paths for h in spec.servers}
    # Mount points of gluster_infra_mount_devices (a duplicate once); without them, the HCI volumes' brick parents.
    assert bricks["host1"] == bricks["host2"] == ("/gluster_bricks/engine", "/gluster_bricks/data")
    assert bricks["host3"] == ("/gluster_bricks/engine", "/gluster_bricks/data", "/gluster_bricks/vmstore")
    assert all(h.ssh.user == "root" for h in spec.hosts)


def test_the_dry_run_lists_an_inventorys_hosts_and_bricks(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gluster_model.cli import cli

    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\nfactors: {layout: distribute, file_size: 1MB, threads: 3}\n")
    out = CliRunner().invoke(cli, ["collect", "--cluster", str(DATA / "clusters" / "gluster_ansible_hc.yml"),
                                   "--plan", str(plan), "--dry-run", "--store", str(tmp_path / "none.db")])
    assert out.exit_code == 0, out.output
    assert ("3 server(s): host1 (/gluster_bricks/engine, /gluster_bricks/data); host2 (/gluster_bricks/engine, "
            "/gluster_bricks/data); host3 (/gluster_bricks/engine, /gluster_bricks/data, /gluster_bricks/vmstore); "
            "3 client(s): host1, host2, host3") in " ".join(out.output.split())


@pytest.mark.parametrize("text,where,says", [
    ("[gluster_servers]\ns1 ansible_host=10.0.0.1\n", "gluster_servers.s1", "no brick directories: set glmodel_brick_paths"),
    ("[gluster_servers]\ns1 ansible_host=10.0.0.1 ansible_port=99999 glmodel_brick_paths=/b\n",
     "gluster_servers.s1.ansible_port", ""),
    ("[hc_nodes]\nh1 gluster_infra_mount_devices=/dev/sdb\n", "hc_nodes.h1.gluster_infra_mount_devices",
     "a list of mappings each with a path"),
])
def test_inventory_problems_are_told_in_inventory_terms(tmp_path: Path, text: str, where: str, says: str) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_cluster(path)
    assert str(err.value).startswith(f"{path}: {where}: ") and says in str(err.value)
    assert "servers[" not in str(err.value) and "defaults.brick_paths" not in str(err.value)


def test_host_ranges_expand_as_ansible_writes_them(tmp_path: Path) -> None:
    """``gfs[01:03]`` keeps its zeros, ``[1:5:2]`` steps, letters count, two ranges multiply; each host named
    by a range has the line's variables."""
    ini = tmp_path / "hosts.ini"
    ini.write_text("[gluster_servers]\ngfs[01:03].lab glmodel_brick_paths=/b ansible_port=2200\n"
                   "[clients]\n10.9.0.[1:5:2]\nrack-[a:b]-n[8:9]\n")
    spec = load_cluster(ini)
    assert [h.name for h in spec.servers] == ["gfs01.lab", "gfs02.lab", "gfs03.lab"]
    assert all(h.ssh.port == 2200 and h.brick_paths == ("/b",) for h in spec.servers)
    assert [h.name for h in spec.clients] == ["10.9.0.1", "10.9.0.3", "10.9.0.5", "rack-a-n8", "rack-a-n9",
                                              "rack-b-n8", "rack-b-n9"]
    yml = tmp_path / "hosts.yml"
    yml.write_text("all:\n  children:\n    gluster_servers:\n      hosts:\n        'srv[7:10]':\n"
                   "      vars: {glmodel_brick_paths: /gl}\n")
    assert [h.name for h in load_cluster(yml).servers] == ["srv7", "srv8", "srv9", "srv10"]


@pytest.mark.parametrize("pattern,says", [
    ("gfs[3:1]", "runs backwards"), ("gfs[01:3]", "same width"), ("gfs[1:a]", "a number to a number"),
    ("gfs[1:3:0]", "step is 1 or more"), ("gfs[1-3]", "a host range is [start:end]"),
    ("n[0:99999]", "at most 4096"), ("n[0:99]m[0:99]", "more than 4096"),
])
def test_a_bad_host_range_is_one_line_naming_its_line(tmp_path: Path, pattern: str, says: str) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(f"[gluster_servers]\n{pattern} glmodel_brick_paths=/b\n")
    with pytest.raises(ConfigError) as err:
        load_cluster(path)
    assert str(err.value).startswith(f"{path}: line 2: '{pattern}'") and says in str(err.value), str(err.value)
    assert "\n" not in str(err.value)


def test_a_port_after_a_host_name_is_its_ssh_port(tmp_path: Path) -> None:
    """``host:port`` as Ansible reads it, ranges and bracketed IPv6 included; an IPv6 address alone keeps port 22,
    a variable's port wins; a section header may carry a comment."""
    ini = tmp_path / "hosts.ini"
    ini.write_text("[gluster_servers]  # bricks here\ngfs1.lab:2222 glmodel_brick_paths=/b\n"
                   "gfs[2:3]:2200 glmodel_brick_paths=/b\n[2001:db8::5]:2201 glmodel_brick_paths=/b\n"
                   "2001:db8::6 glmodel_brick_paths=/b\nx:2300 ansible_port=2400 glmodel_brick_paths=/b\n")
    assert [(h.address, h.ssh.port) for h in load_cluster(ini).hosts] == [
        ("gfs1.lab", 2222), ("gfs2", 2200), ("gfs3", 2200), ("2001:db8::5", 2201), ("2001:db8::6", 22), ("x", 2400)]
    yml = tmp_path / "hosts.yml"
    yml.write_text("all:\n  children:\n    gluster_servers:\n      hosts:\n        'srv1:2022': {glmodel_brick_paths: /b}\n")
    assert [(h.address, h.ssh.port) for h in load_cluster(yml).hosts] == [("srv1", 2022)]


def test_older_ansible_connection_names_are_read_and_the_current_ones_win(tmp_path: Path) -> None:
    """ansible_ssh_host (Ansible before 2.0) and ansible_private_key_file are read; where an older and a current
    name are both set, the current one counts, as in Ansible."""
    (tmp_path / "k1").write_text("key")
    (tmp_path / "k2").write_text("key")
    ini = tmp_path / "hosts.ini"
    ini.write_text("[gluster_servers]\nold ansible_ssh_host=10.3.0.1 ansible_private_key_file=k1 "
                   "glmodel_brick_paths=/b\nboth ansible_ssh_host=10.3.0.9 ansible_host=10.3.0.2 ansible_ssh_user=a "
                   "ansible_user=b ansible_ssh_port=2201 ansible_port=2202 glmodel_brick_paths=/b\n")
    old, both = load_cluster(ini).hosts
    assert (old.name, old.address, old.ssh.identity_file) == ("old", "10.3.0.1", (tmp_path / "k1").resolve())
    assert (both.address, both.ssh.user, both.ssh.port) == ("10.3.0.2", "b", 2202)
