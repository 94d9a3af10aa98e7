"""The local lab: N real GlusterFS nodes of one machine, each in a network namespace of its own (see netns).

Each node is a glusterd with its own working directory, run directory, socket, pid file and address, plus an
sshd on the node's address with a host key of the lab's own, both started inside the node's namespace. The lab
writes ``lab.yaml``, an ordinary cluster file, so every other command treats the lab as it would a real cluster.

Everything the lab creates is recorded in ``state.json`` before it is created, so ``lab down`` (or the next
``lab up`` in the same directory) can remove exactly that and nothing else, even after a kill -9.
"""

from __future__ import annotations

import getpass
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.cluster import check_remote_path
from ..errors import LabError
from ..gluster.cli import GLUSTERD_PORT, gluster_argv, parse_peer_status_xml
from ..hardware.settings import KnobValue
from ..hardware.link import removal_argv
from . import bricks, netns
from .clusterfile import write_cluster_file
from .hardware import remove_all, set_hardware
from ..processes import terminate
from .run import (Progress, all_pids, cmdline, descendants, names, port_open, quiet, read_pid, run,
                  wait_for)
from .state import CLUSTER_FILE, STATE_FILE, LabState, NodeState

DEFAULT_SSH_PORT = 2222
MAX_NODES = 16
_UNIX_PATH_MAX = 107  # sun_path is 108 bytes including the terminating NUL


# -- the lab's processes and mounts ---------------------------------------------------------------------

def _belongs(pid: int, lab_dir: Path) -> bool:
    """A process is the lab's only if its command line names the lab directory (pids get reused)."""
    return names(pid, str(lab_dir))


def lab_pids(lab_dir: Path) -> list[int]:
    """Every live process that belongs to the lab in ``lab_dir``: every process inside a node's namespace
    (daemons, bricks, and what SSH sessions started, orphans included), daemons from pid files, and any process
    (a FUSE client mounted from the machine itself) whose command line names the lab directory."""
    found: set[int] = set()
    for index in range(1, MAX_NODES + 1):
        found.update(netns.pids(netns.netns_name(str(lab_dir), index)))
    for pidfile in list(lab_dir.glob("nodes/*/*.pid")) + list(lab_dir.glob("nodes/*/run/**/*.pid")):
        pid = read_pid(pidfile)
        if pid and _belongs(pid, lab_dir):
            found.add(pid)
    me = os.getpid()
    for pid in all_pids():
        if pid != me and pid not in found and _belongs(pid, lab_dir):
            name = Path(cmdline(pid)[0]).name if cmdline(pid) else ""
            if name in ("glusterd", "glusterfsd", "glusterfs", "sshd"):
                found.add(pid)
    return sorted(found)


def lab_mounts(lab_dir: Path) -> list[str]:
    """Mount points under the lab directory (stale FUSE mounts included), deepest first."""
    marker = str(lab_dir).rstrip("/") + "/"
    found = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2:
            target = parts[1].replace("\\040", " ")
            if target.startswith(marker):
                found.append(target)
    return sorted(set(found), key=len, reverse=True)


# -- bring-up ---------------------------------------------------------------------------------------------

def _preconditions(lab_dir: Path, nodes: int, ssh_port: int) -> None:
    if os.geteuid() != 0:
        raise LabError("the lab needs root (glusterd bricks and FUSE mounts); run as root")
    if not 1 <= nodes <= MAX_NODES:
        raise LabError(f"--nodes must be between 1 and {MAX_NODES}, got {nodes}")
    if not 1 <= ssh_port <= 65535:
        raise LabError(f"--ssh-port must be between 1 and 65535, got {ssh_port}")
    try:
        check_remote_path(str(lab_dir))
    except ValueError as exc:
        raise LabError(f"--dir {exc}") from None
    socket_path = lab_dir / "nodes" / str(nodes) / "run" / "glusterd.socket"
    if len(str(socket_path)) > _UNIX_PATH_MAX:
        raise LabError(f"--dir {lab_dir} is too long for a UNIX socket path ({len(str(socket_path))} > "
                       f"{_UNIX_PATH_MAX} characters); choose a shorter directory")
    for tool in ("glusterd", "gluster", "ssh-keygen", "ip", "tc", "nsenter"):
        if shutil.which(tool) is None:
            raise LabError(f"`{tool}` not found; run scripts/setup.sh to install the lab's packages")
    if not Path("/usr/sbin/sshd").exists():
        raise LabError("/usr/sbin/sshd not found; run scripts/setup.sh (installs openssh-server)")


def _keygen(path: Path, comment: str) -> None:
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])


def _sshd_config(node: NodeState, state: LabState) -> str:
    ssh = state.path / "ssh"
    user = getpass.getuser()
    # Key-only root login on the node's own address (its namespace's NIC on the lab's bridge);
    # the lab's own host key and authorized_keys file.
    return "\n".join([
        f"ListenAddress {node.address}:{state.ssh_port}",
        f"HostKey {node.path / 'ssh_host_ed25519_key'}",
        f"PidFile {node.sshd_pidfile}",
        f"AuthorizedKeysFile {ssh / 'authorized_keys'}",
        "PermitRootLogin prohibit-password",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PubkeyAuthentication yes",
        "UsePAM no",
        # The lab directory may sit under /tmp (mode 1777), which StrictModes refuses on the path to the
        # authorized_keys file. The lab writes that file itself with mode 0600 and listens on the node's address only.
        "StrictModes no",
        f"AllowUsers {user}",
        "MaxStartups 64:30:128",
        "MaxSessions 64",
        "PrintMotd no",
        "X11Forwarding no",
        "AllowTcpForwarding no",
        "Subsystem sftp internal-sftp",
        # A node's sessions get a home of their own: bash started by sshd reads ~/.bashrc, and the operator's
        # (version managers, prompt tools) then ran in every lab command, ~55 ms of CPU each, serialised on a
        # small machine (three hosts' `true` took 0.27 s instead of 0.04 s) and inside trials (iozone's children
        # start over SSH). A real node runs its own profile, not the one of the machine the lab runs on.
        f"SetEnv HOME={node.home}",
        "",
    ])


def start_glusterd(node: NodeState) -> None:
    (node.path / "glusterd").mkdir(parents=True, exist_ok=True)
    (node.path / "run").mkdir(parents=True, exist_ok=True)
    run(netns.as_node(node.netns, node.address, [
        "glusterd",
        "--xlator-option", f"management.working-directory={node.path / 'glusterd'}",
        "--xlator-option", f"management.transport.socket.bind-address={node.address}",
        "--xlator-option", f"management.run-directory={node.path / 'run'}",
        "--xlator-option", f"management.glusterd-sockfile={node.socket}",
        f"--log-file={node.path / 'log' / 'glusterd.log'}",
        f"--pid-file={node.glusterd_pidfile}",
    ]))


def start_sshd(node: NodeState, state: LabState) -> None:
    """Start (or restart) one node's sshd; also used by tests to bring a stopped node back."""
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
    node.home.mkdir(mode=0o700, exist_ok=True)
    node.sshd_config.write_text(_sshd_config(node, state))
    run(netns.as_node(node.netns, node.address, ["/usr/sbin/sshd", "-f", str(node.sshd_config), "-E",
                                                  str(node.path / "log" / "sshd.log")]))
    wait_for(lambda: port_open(node.address, state.ssh_port), 10, f"sshd on {node.address}:{state.ssh_port}")


def stop_sshd(node: NodeState, lab_dir: Path, sessions: bool = False) -> None:
    """Stop one node's sshd listener; with ``sessions`` also its established sessions (a dropped node).

    Without ``sessions`` connections already open keep working, as after `systemctl stop ssh`.
    """
    pid = read_pid(node.sshd_pidfile)
    if pid and _belongs(pid, lab_dir):
        terminate(([pid] + descendants(pid)) if sessions else [pid], grace=10.0)


def lab_up(lab_dir: Path, nodes: int = 3, ssh_port: int = DEFAULT_SSH_PORT, progress: Progress = quiet,
           hardware: Mapping[str, KnobValue] | None = None, brick_size: int = 4 << 30, client_nodes: int = 0,
           subnet: str | None = None) -> LabState:
    """Bring up an N-node lab in ``lab_dir`` and return its state; ``lab_dir/lab.yaml`` is the cluster file.

    ``hardware``: every node's settings, parsed (see ``hardware.KNOBS``: link, backing, disk, RAM, CPU);
    ``brick_size``: bytes of each loop image or tmpfs; ``client_nodes``: how many of the nodes (the last ones)
    are clients only, the others then servers only (0: every node is both, a hyperconverged cluster, where a
    client reaches its own brick without crossing its NIC); ``subnet``: the lab's private /24 (another lab on
    the machine needs another; None: the subnet of the lab that was in ``lab_dir``, else 10.213.1.0/24).
    """
    if not 0 <= client_nodes < nodes:
        raise LabError(f"--client-nodes {client_nodes}: give 0 (every node client and server) up to {nodes - 1} "
                       f"(at least one server among {nodes} node(s))")
    lab_dir = lab_dir.expanduser().absolute()
    earlier = LabState.load(lab_dir) if subnet is None else None
    subnet = str(netns.parse_subnet(subnet or (earlier.subnet if earlier else netns.DEFAULT_SUBNET)))
    _preconditions(lab_dir, nodes, ssh_port)
    if (lab_dir / STATE_FILE).exists() or lab_mounts(lab_dir):
        progress(f"clearing what an earlier lab left in {lab_dir}")
        lab_down(lab_dir, progress)
    elif lab_dir.exists() and any(lab_dir.iterdir()):
        raise LabError(f"{lab_dir} exists and is not an earlier lab's directory; choose another --dir or empty it")
    addresses = [netns.node_address(i, subnet) for i in range(1, nodes + 1)]
    netns.check_free(str(lab_dir), subnet)

    lab_dir.mkdir(parents=True, exist_ok=True)
    state = LabState(dir=str(lab_dir), ssh_port=ssh_port, brick_size=brick_size, client_nodes=client_nodes,
                     subnet=subnet,
                     nodes=[NodeState(i, a, str(lab_dir / "nodes" / str(i)), netns.netns_name(str(lab_dir), i))
                            for i, a in enumerate(addresses, 1)])
    state.networks = [n.netns for n in state.nodes]
    state.save()  # recorded before anything starts, so an interrupted bring-up can be cleaned up
    progress(f"giving each node a network namespace and a NIC on the bridge {netns.bridge_name(str(lab_dir))}")
    netns.create(str(lab_dir), [n.index for n in state.nodes], subnet)

    ssh = lab_dir / "ssh"
    ssh.mkdir(mode=0o700)
    progress("generating lab SSH keys")
    _keygen(ssh / "id_ed25519", "glmodel-lab-client")
    (ssh / "authorized_keys").write_text((ssh / "id_ed25519.pub").read_text())
    os.chmod(ssh / "authorized_keys", 0o600)
    known: list[str] = []
    for node in state.nodes:
        for sub in ("log", "bricks", "mnt"):
            (node.path / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(node.path, 0o700)
        _keygen(node.path / "ssh_host_ed25519_key", f"glmodel-lab-{node.address}")
        kind, key = (node.path / "ssh_host_ed25519_key.pub").read_text().split()[:2]
        # The lab generated these host keys itself, so recording them is verification, not blind trust.
        known.append(f"[{node.address}]:{ssh_port} {kind} {key}")
    (ssh / "known_hosts").write_text("\n".join(known) + "\n")
    os.chmod(ssh / "known_hosts", 0o600)

    progress(f"starting {nodes} glusterd and sshd")
    for node in state.nodes:
        start_glusterd(node)
        start_sshd(node, state)
    for node in state.nodes:
        wait_for(lambda n=node: port_open(n.address, GLUSTERD_PORT), 15, f"glusterd on {node.address}")  # type: ignore[misc]
        wait_for(lambda n=node: Path(n.socket).exists(), 15, f"glusterd socket of {node.address}")  # type: ignore[misc]

    first = state.nodes[0]
    if nodes > 1:
        progress("probing peers into one trusted pool")
        for node in state.nodes[1:]:
            run(gluster_argv("peer", "probe", node.address, socket=first.socket), timeout=60)
        wait_for(lambda: _pool_connected(state), 60, "every peer to be connected")
    if hardware:
        progress("setting every node's hardware: " + ", ".join(sorted(hardware)))
        set_hardware(state, addresses, hardware, progress=progress)
    write_cluster_file(state)
    state.status = "up"
    state.save()
    progress(f"lab up: {nodes} node(s) at {addresses[0]}..{addresses[-1]}, cluster file {state.cluster_file}")
    return state


def _pool_connected(state: LabState) -> bool:
    for node in state.nodes:
        proc = run(gluster_argv("peer", "status", socket=node.socket, xml=True), check=False)
        if proc.returncode != 0:
            return False
        try:
            peers = parse_peer_status_xml(proc.stdout)
        except Exception:  # noqa: BLE001 - a half-started glusterd may answer oddly; keep polling
            return False
        if len(peers) != len(state.nodes) - 1 or not all(p.connected for p in peers):
            return False
    return True


# -- tear-down and status -----------------------------------------------------------------------------------

def lab_down(lab_dir: Path, progress: Progress = quiet) -> list[str]:
    """Unmount, stop volumes, end the lab's processes and remove its state. Safe to run twice."""
    lab_dir = lab_dir.expanduser().absolute()
    state = LabState.load(lab_dir)
    done: list[str] = []
    mounts = lab_mounts(lab_dir)
    if state is None and not mounts and not lab_pids(lab_dir):
        progress(f"no lab in {lab_dir}; nothing to do")
        return done
    for target in mounts:
        # Lazy: a stale FUSE mount ("Transport endpoint is not connected") cannot be unmounted any other way.
        run(["umount", "-l", target], check=False)
        done.append(f"unmounted {target}")
    if state is not None:
        alive = [n for n in state.nodes if Path(n.socket).exists() and port_open(n.address, GLUSTERD_PORT)]
        if alive:
            sock = alive[0].socket
            vols = run(gluster_argv("volume", "list", socket=sock), check=False, timeout=30)
            for vol in vols.stdout.split() if vols.returncode == 0 else []:
                if vol.startswith("No"):
                    break
                run(gluster_argv("volume", "stop", vol, "force", socket=sock), check=False, timeout=60)
                done.append(f"stopped volume {vol}")
    if state is not None and state.shaping:  # a lab brought up by an earlier version shaped lo itself
        for argv in removal_argv("lo"):
            run(argv, check=False)
        done.append("removed link shaping")
    pids = lab_pids(lab_dir)
    if pids:
        terminate(pids, grace=10.0)
        done.append(f"ended {len(pids)} process(es)")
    for target in lab_mounts(lab_dir):  # a client that died late may have left one more
        run(["umount", "-l", target], check=False)
    if state is not None:
        # Throttle entries first: a loop device outlives its image, and its entries would slow its next user.
        left = remove_all(state)
        if state.disk or state.ram or state.cpu:
            done.append("removed disk throttles and node cgroups")
        for n in state.nodes:  # detach checks what is there: an interrupted set_backing may have left an image
            bricks.detach(n.path, Path(n.bricks))
        if state.backing:
            done.append("removed brick backings")
        left += netns.delete(str(lab_dir), state.networks)
        if state.networks:
            done.append("removed the nodes' network namespaces, NICs and the bridge")
        if left:
            raise LabError(f"lab down in {lab_dir} could not remove {'; '.join(left)}; run `glmodel lab down "
                           f"--dir {lab_dir}` again once the processes in it have ended")
    for name in ("nodes", "ssh"):
        shutil.rmtree(lab_dir / name, ignore_errors=True)
    for name in (CLUSTER_FILE, STATE_FILE, STATE_FILE + ".tmp"):
        (lab_dir / name).unlink(missing_ok=True)
    try:
        lab_dir.rmdir()
    except OSError:
        pass  # the directory holds files the lab did not create; leave them
    done.append(f"removed lab state in {lab_dir}")
    progress("; ".join(done))
    return done


@dataclass(frozen=True)
class NodeStatus:
    address: str
    glusterd: bool
    sshd: bool
    peers_connected: int
    peers_total: int


def lab_status(lab_dir: Path) -> tuple[LabState, list[NodeStatus]]:
    """Health of each node: daemons listening and peers connected."""
    lab_dir = lab_dir.expanduser().absolute()
    state = LabState.load(lab_dir)
    if state is None:
        raise LabError(f"no lab in {lab_dir}; start one with `glmodel lab up --dir {lab_dir}`")
    out = []
    for node in state.nodes:
        gd = port_open(node.address, GLUSTERD_PORT)
        sshd = port_open(node.address, state.ssh_port)
        connected = 0
        if gd:
            proc = run(gluster_argv("peer", "status", socket=node.socket, xml=True), check=False)
            try:
                connected = sum(p.connected for p in parse_peer_status_xml(proc.stdout))
            except Exception:  # noqa: BLE001 - status reports what it can
                connected = 0
        out.append(NodeStatus(node.address, gd, sshd, connected, len(state.nodes) - 1))
    return state, out
