"""The lab's ``lab.yaml``: an ordinary cluster file, so every other command treats the lab as a real cluster."""

from __future__ import annotations

import getpass
from collections.abc import Mapping
from pathlib import Path

from ..hardware.link import show_rate
from .run import run
from .state import LabState

_KNOWN_FS = ("ext4", "xfs", "btrfs", "zfs", "tmpfs")


def write_cluster_file(state: LabState) -> None:
    """Write (or rewrite, after a hardware change) the cluster file; its hardware labels are labels only: the
    models take every figure from the measured host facts and baselines."""
    import yaml

    fstype = run(["df", "--output=fstype", str(state.path)]).stdout.split()[-1]
    kinds = {state.backing.get(n.address, "dir") for n in state.nodes}
    if len(kinds) == 1 and kinds != {"dir"}:
        fstype = kinds.pop()
    elif len(kinds) > 1:
        fstype = "mixed"
    rates = {state.links.get(n.address) for n in state.nodes}
    network: dict[str, object] = {"name": "veth on a bridge", "gbps": 100}
    rate = rates.pop() if len(rates) == 1 else None
    if rate is not None:
        network = {"name": f"veth shaped to {show_rate(rate)}", "gbps": rate / 1e9}
    elif state.links:
        network = {"name": "veth, some nodes shaped", "gbps": min(state.links.values()) / 1e9}
    data = {
        "name": "lab",
        "lab": {"state_dir": "."},
        "ssh": {
            "user": getpass.getuser(),
            "port": state.ssh_port,
            "identity_file": "ssh/id_ed25519",
            "known_hosts": "ssh/known_hosts",
            "connect_timeout": 10,
        },
        "hardware": {
            "network": network,
            "base_filesystem": fstype if fstype in _KNOWN_FS else "other",
        },
        "servers": [
            {"host": n.address, "name": f"node{n.index}", "brick_paths": [n.bricks], "mount_root": n.mounts,
             "local_dir": n.local, "glusterd_socket": n.socket}
            for n in state.server_nodes
        ],
    }
    roles = "clients = servers"
    if state.client_only:  # clients apart from the servers: every byte a client moves crosses its NIC
        data["clients"] = [{"host": n.address, "name": f"node{n.index}", "mount_root": n.mounts,
                            "local_dir": n.local, "glusterd_socket": n.socket} for n in state.client_only]
        roles = f"{len(state.server_nodes)} server(s), {len(state.client_only)} client(s) apart from them"
    header = f"# Written by `glmodel lab up`: an ordinary cluster file for the local lab ({roles}).\n"
    state.cluster_file.write_text(header + yaml.safe_dump(data, sort_keys=False))


def write_plain_cluster_file(lab_dir: Path, out: Path, record_dir: Path | str, name: str | None = None,
                             network: Mapping[str, object] | None = None) -> Path:
    """Write the lab's cluster file as a user's cluster: no ``lab:`` (no lab state to change hardware with), the
    lab's key and known hosts by absolute path, emulation allowed with its records in ``record_dir``; ``name``
    and ``network`` (the hardware label) replace the lab's where given. The path a user's collection takes, on
    the lab's nodes (the stages proofs, the emulation tests)."""
    import yaml

    lab_dir = lab_dir.absolute()
    data = yaml.safe_load((lab_dir / "lab.yaml").read_text())
    del data["lab"]
    if name is not None:
        data["name"] = name
    data["ssh"]["identity_file"] = str(lab_dir / "ssh" / "id_ed25519")
    data["ssh"]["known_hosts"] = str(lab_dir / "ssh" / "known_hosts")
    data["emulation"] = {"allow": True, "record_dir": str(record_dir)}
    if network is not None:
        data.setdefault("hardware", {})["network"] = dict(network)
    out.write_text(yaml.safe_dump(data))
    return out
