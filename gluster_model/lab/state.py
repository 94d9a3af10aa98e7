"""What a lab is made of, as recorded in ``state.json``: its nodes and every piece of hardware it set up.

Everything the lab adds to the machine (a qdisc, a loop device, a throttle entry, a cgroup) is written here
*before* it is added, so ``lab down`` (or the next ``lab up`` in the same directory) removes exactly that and
nothing else, even after a kill -9.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..errors import LabError
from .netns import DEFAULT_SUBNET

STATE_FILE = "state.json"
CLUSTER_FILE = "lab.yaml"


@dataclass
class NodeState:
    index: int
    address: str
    dir: str
    netns: str = ""  # the node's network namespace (see netns)

    @property
    def path(self) -> Path:
        return Path(self.dir)

    @property
    def marker(self) -> str:
        """Text that every command line of this node's processes holds (its directory, with a slash)."""
        return self.dir.rstrip("/") + "/"

    @property
    def socket(self) -> str:
        return str(self.path / "run" / "glusterd.socket")

    @property
    def glusterd_pidfile(self) -> Path:
        return self.path / "glusterd.pid"

    @property
    def sshd_pidfile(self) -> Path:
        return self.path / "sshd.pid"

    @property
    def sshd_config(self) -> Path:
        return self.path / "sshd_config"

    @property
    def home(self) -> Path:
        """The home directory of the node's SSH sessions (empty: no profile of the operator's runs there)."""
        return self.path / "home"

    @property
    def bricks(self) -> str:
        return str(self.path / "bricks")

    @property
    def mounts(self) -> str:
        return str(self.path / "mnt")

    @property
    def local(self) -> str:
        """The node's "own filesystem" for local reads (the machine's disk, beside the node's bricks)."""
        return str(self.path / "local")


@dataclass
class LabState:
    dir: str
    ssh_port: int
    nodes: list[NodeState] = field(default_factory=list)
    status: str = "starting"
    links: dict[str, int] = field(default_factory=dict)  # address -> bit/s of shaped nodes
    networks: list[str] = field(default_factory=list)  # network namespaces made (recorded before they are)
    shaping: bool = False  # a loopback lab of an earlier version shaped lo (its lab down removes that)
    backing: dict[str, str] = field(default_factory=dict)  # address -> brick backing other than "dir"
    brick_size: int = 4 << 30  # bytes of each loop image or tmpfs
    # address -> {read_bps, write_bps, read_iops, write_iops}: the limits asked of each node's brick device
    disk: dict[str, dict[str, int]] = field(default_factory=dict)
    # [file, "MAJ:MIN"] throttle entries written on the machine (v1 blkio files or v2 io.max)
    throttles: list[list[str]] = field(default_factory=list)
    ram: dict[str, int] = field(default_factory=dict)  # address -> bytes of memory its processes may use
    cpu: dict[str, float] = field(default_factory=dict)  # address -> CPU cores its processes may use
    cgroups: list[str] = field(default_factory=list)  # cgroup directories the lab created, parents first
    # knobs set by commands (hardware.knob.HostStep): knob -> address -> {"value": set, "was": what the node had},
    # "was" read before the first change, so setting the knob to None puts exactly that back
    stepped: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    # The last K nodes are clients only and the others servers only (0: every node both, hyperconverged).
    client_nodes: int = 0
    # Every node's settings before a plan (collect, verify) began to change them, recorded before the first
    # change and cleared once they are put back: a plan killed with -9 leaves it, and the next plan puts the
    # lab back to it, not to the killed plan's last setting.
    before_plan: dict[str, dict[str, Any]] | None = None
    subnet: str = DEFAULT_SUBNET  # the lab's /24 (a lab of an earlier release had no other)

    @property
    def server_nodes(self) -> list[NodeState]:
        return self.nodes[: len(self.nodes) - self.client_nodes]

    @property
    def client_only(self) -> list[NodeState]:
        return self.nodes[len(self.nodes) - self.client_nodes:]

    def role(self, address: str) -> str:
        """``client``, ``server`` or ``client+server`` (every node of a lab without client nodes)."""
        if not self.client_nodes:
            return "client+server"
        return "client" if any(n.address == address for n in self.client_only) else "server"

    @property
    def path(self) -> Path:
        return Path(self.dir)

    @property
    def cluster_file(self) -> Path:
        return self.path / CLUSTER_FILE

    def save(self) -> None:
        tmp = self.path / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        os.replace(tmp, self.path / STATE_FILE)

    @classmethod
    def load(cls, lab_dir: Path) -> LabState | None:
        path = lab_dir / STATE_FILE
        if not path.is_file():
            return None
        try:
            raw = json.loads(path.read_text())
            nodes = [NodeState(**n) for n in raw.pop("nodes")]
            known = {f.name for f in fields(cls)}
            # a lab of an earlier release kept its delays in a table of their own: now a knob set by commands
            for address, us in (raw.pop("latency", None) or {}).items():
                raw.setdefault("stepped", {}).setdefault("latency", {})[address] = {"value": us, "was": "none"}
            return cls(nodes=nodes, **{k: v for k, v in raw.items() if k in known})
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise LabError(f"{path}: not a glmodel lab state file ({exc}); remove {lab_dir} by hand if it is stale") from None

    def node(self, address: str) -> NodeState:
        for n in self.nodes:
            if n.address == address:
                return n
        raise LabError(f"no node {address} in the lab in {self.dir}")

    def check_known(self, addresses: Mapping[str, object] | list[str]) -> None:
        unknown = sorted(set(addresses) - {n.address for n in self.nodes})
        if unknown:
            raise LabError(f"no node {', '.join(unknown)} in the lab in {self.dir}")


def load_lab(lab_dir: Path) -> LabState:
    """The lab in ``lab_dir``; a LabError with the command that starts one if there is none."""
    state = LabState.load(lab_dir.expanduser().absolute())
    if state is None:
        raise LabError(f"no lab in {lab_dir}; start one with `glmodel lab up --dir {lab_dir}`")
    return state


def find_node(lab_dir: Path, address_or_index: str) -> tuple[LabState, NodeState]:
    """Find one node of a lab by address (10.213.1.2), index (2) or name (node2)."""
    state = load_lab(lab_dir)
    for n in state.nodes:
        if address_or_index in (n.address, str(n.index), f"node{n.index}"):
            return state, n
    raise LabError(f"no node {address_or_index!r} in the lab in {lab_dir} (use its address, index or nodeN)")
