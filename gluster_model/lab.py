"""The local lab: N real GlusterFS nodes on loopback addresses 127.1.1.1..N of one machine.

Each node is a glusterd with its own working directory, run directory, socket, pid file and bind address,
plus an sshd bound to the node's address with a host key of the lab's own. The lab writes ``lab.yaml``, an
ordinary cluster file, so every other command treats the lab as it would a real cluster.

Everything the lab creates is recorded in ``state.json`` before it is created, so ``lab down`` (or the next
``lab up`` in the same directory) can remove exactly that and nothing else, even after a kill -9.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .config import check_remote_path
from .errors import LabError
from .gluster.cli import gluster_argv, parse_peer_status_xml

PREFIX = "127.1.1."
GLUSTERD_PORT = 24007
DEFAULT_SSH_PORT = 2222
STATE_FILE = "state.json"
CLUSTER_FILE = "lab.yaml"
MAX_NODES = 16
_UNIX_PATH_MAX = 107  # sun_path is 108 bytes including the terminating NUL

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass
class NodeState:
    index: int
    address: str
    dir: str

    @property
    def path(self) -> Path:
        return Path(self.dir)

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
    shaping: bool = False  # lo's qdiscs and the IFB device are ours (recorded before they are added)
    backing: dict[str, str] = field(default_factory=dict)  # address -> brick backing other than "dir"
    brick_size: int = 4 << 30  # bytes of each loop image or tmpfs

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
            return cls(nodes=nodes, **raw)
        except (ValueError, TypeError, KeyError) as exc:
            raise LabError(f"{path}: not a glmodel lab state file ({exc}); remove {lab_dir} by hand if it is stale") from None


# -- small local helpers (the lab's side effects) ----------------------------------------------------------

def _run(argv: list[str], timeout: float = 30, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise LabError(f"`{argv[0]}` not found; run scripts/setup.sh to install the lab's packages") from None
    except subprocess.TimeoutExpired:
        raise LabError(f"`{' '.join(argv)}` did not finish within {timeout:g}s") from None
    if check and proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        hint = " (the lab needs root)" if "Operation not permitted" in proc.stderr else ""
        raise LabError(f"`{' '.join(argv)}` exited {proc.returncode}: {tail[0]}{hint}")
    return proc


def _port_open(address: str, port: int, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def _port_free(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise LabError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.05)


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def _all_pids() -> Iterator[int]:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            yield int(entry.name)


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _belongs(pid: int, lab_dir: Path) -> bool:
    """A process is the lab's only if its command line names the lab directory (pids get reused)."""
    marker = str(lab_dir)
    return any(marker in arg for arg in _cmdline(pid))


def lab_pids(lab_dir: Path) -> list[int]:
    """Every live process that belongs to the lab in ``lab_dir``: daemons from pid files, and any process
    (bricks, self-heal daemons, FUSE clients) whose command line names the lab directory."""
    found: set[int] = set()
    for pidfile in list(lab_dir.glob("nodes/*/*.pid")) + list(lab_dir.glob("nodes/*/run/**/*.pid")):
        pid = _read_pid(pidfile)
        if pid and _belongs(pid, lab_dir):
            found.add(pid)
    me = os.getpid()
    for pid in _all_pids():
        if pid != me and pid not in found and _belongs(pid, lab_dir):
            name = Path(_cmdline(pid)[0]).name if _cmdline(pid) else ""
            if name in ("glusterd", "glusterfsd", "glusterfs", "sshd"):
                found.add(pid)
    return sorted(found)


def _terminate(pids: list[int], timeout: float = 10.0) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if Path(f"/proc/{p}").exists() and not _zombie(p)]
        if alive:
            time.sleep(0.05)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return True


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


def _holder(address: str, port: int) -> str:
    """Describe which process (and which lab directory, if it is a lab's) listens on address:port."""
    for pid in _all_pids():
        args = _cmdline(pid)
        if not args:
            continue
        name = Path(args[0]).name
        joined = " ".join(args)
        if name == "glusterd" and port == GLUSTERD_PORT and f"bind-address={address}" in joined:
            for a in args:
                if a.startswith("management.working-directory="):
                    lab = Path(a.split("=", 1)[1]).parent.parent.parent
                    return f"a glusterd of the lab in {lab} (pid {pid}); run `glmodel lab down --dir {lab}`"
            return f"glusterd pid {pid}"
        if name == "sshd" and "-f" in args:
            cfg = Path(args[args.index("-f") + 1]) if args.index("-f") + 1 < len(args) else None
            if cfg and cfg.name == "sshd_config" and cfg.parent.parent.name == "nodes":
                try:
                    if f"ListenAddress {address}:{port}" in cfg.read_text():
                        lab = cfg.parent.parent.parent
                        return f"an sshd of the lab in {lab} (pid {pid}); run `glmodel lab down --dir {lab}`"
                except OSError:
                    pass
    return f"another process; find it with `ss -ltnp 'sport = :{port}'` and stop it, or pick another --ssh-port"


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
    for tool in ("glusterd", "gluster", "ssh-keygen"):
        if shutil.which(tool) is None:
            raise LabError(f"`{tool}` not found; run scripts/setup.sh to install the lab's packages")
    if not Path("/usr/sbin/sshd").exists():
        raise LabError("/usr/sbin/sshd not found; run scripts/setup.sh (installs openssh-server)")


def _keygen(path: Path, comment: str) -> None:
    _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])


def _sshd_config(node: NodeState, state: LabState) -> str:
    ssh = state.path / "ssh"
    user = getpass.getuser()
    # Key-only root login on one loopback address; the lab's own host key and authorized_keys file.
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
        # authorized_keys file. The lab writes that file itself with mode 0600 and listens on loopback only.
        "StrictModes no",
        f"AllowUsers {user}",
        "MaxStartups 64:30:128",
        "MaxSessions 64",
        "PrintMotd no",
        "X11Forwarding no",
        "AllowTcpForwarding no",
        "Subsystem sftp internal-sftp",
        "",
    ])


def start_glusterd(node: NodeState) -> None:
    (node.path / "glusterd").mkdir(parents=True, exist_ok=True)
    (node.path / "run").mkdir(parents=True, exist_ok=True)
    _run([
        "glusterd",
        "--xlator-option", f"management.working-directory={node.path / 'glusterd'}",
        "--xlator-option", f"management.transport.socket.bind-address={node.address}",
        "--xlator-option", f"management.run-directory={node.path / 'run'}",
        "--xlator-option", f"management.glusterd-sockfile={node.socket}",
        f"--log-file={node.path / 'log' / 'glusterd.log'}",
        f"--pid-file={node.glusterd_pidfile}",
    ])


def start_sshd(node: NodeState, state: LabState) -> None:
    """Start (or restart) one node's sshd; also used by tests to bring a stopped node back."""
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
    node.sshd_config.write_text(_sshd_config(node, state))
    _run(["/usr/sbin/sshd", "-f", str(node.sshd_config), "-E", str(node.path / "log" / "sshd.log")])
    _wait(lambda: _port_open(node.address, state.ssh_port), 10, f"sshd on {node.address}:{state.ssh_port}")


def stop_sshd(node: NodeState, lab_dir: Path, sessions: bool = False) -> None:
    """Stop one node's sshd listener; with ``sessions`` also its established sessions (a dropped node).

    Without ``sessions`` connections already open keep working, as after `systemctl stop ssh`.
    """
    pid = _read_pid(node.sshd_pidfile)
    if pid and _belongs(pid, lab_dir):
        _terminate(([pid] + _descendants(pid)) if sessions else [pid])


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc parent links)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _write_cluster_file(state: LabState) -> None:
    import yaml

    fstype = _run(["df", "--output=fstype", str(state.path)]).stdout.split()[-1]
    kinds = {state.backing.get(n.address, "dir") for n in state.nodes}
    if len(kinds) == 1 and kinds != {"dir"}:
        fstype = kinds.pop()
    elif len(kinds) > 1:
        fstype = "mixed"  # a label only: the models take each run's filesystem from the host facts
    rates = {state.links.get(n.address) for n in state.nodes}
    network: dict[str, object] = {"name": "loopback", "gbps": 100}
    rate = rates.pop() if len(rates) == 1 else None
    if rate is not None:
        from .lab_links import show_rate

        network = {"name": f"loopback shaped to {show_rate(rate)}", "gbps": rate / 1e9}
    elif state.links:
        network = {"name": "loopback, some nodes shaped", "gbps": min(state.links.values()) / 1e9}
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
            "base_filesystem": fstype if fstype in ("ext4", "xfs", "btrfs", "zfs", "tmpfs") else "other",
        },
        "servers": [
            # source_address: the node's clients connect from its own address (not 127.0.0.1), so its link
            # shaping covers its client traffic as well as its bricks'.
            {"host": n.address, "name": f"node{n.index}", "brick_paths": [n.bricks], "mount_root": n.mounts,
             "local_dir": n.local, "glusterd_socket": n.socket, "source_address": n.address}
            for n in state.nodes
        ],
    }
    header = "# Written by `glmodel lab up`: an ordinary cluster file for the local lab (clients = servers).\n"
    state.cluster_file.write_text(header + yaml.safe_dump(data, sort_keys=False))


def lab_up(lab_dir: Path, nodes: int = 3, ssh_port: int = DEFAULT_SSH_PORT, progress: Progress = _quiet,
           link: int | None = None, backing: str = "dir", brick_size: int = 4 << 30) -> LabState:
    """Bring up an N-node lab in ``lab_dir`` and return its state; ``lab_dir/lab.yaml`` is the cluster file.

    ``link``: every node's link rate in bit/s (None: loopback speed). ``backing``: every node's brick backing
    (see lab_bricks), ``brick_size`` bytes each.
    """
    lab_dir = lab_dir.expanduser().absolute()
    _preconditions(lab_dir, nodes, ssh_port)
    if (lab_dir / STATE_FILE).exists() or lab_mounts(lab_dir):
        progress(f"clearing what an earlier lab left in {lab_dir}")
        lab_down(lab_dir, progress)
    elif lab_dir.exists() and any(lab_dir.iterdir()):
        raise LabError(f"{lab_dir} exists and is not an earlier lab's directory; choose another --dir or empty it")
    addresses = [f"{PREFIX}{i}" for i in range(1, nodes + 1)]
    for address in addresses:
        for port in (GLUSTERD_PORT, ssh_port):
            if not _port_free(address, port):
                raise LabError(f"{address}:{port} is already in use by {_holder(address, port)}")

    lab_dir.mkdir(parents=True, exist_ok=True)
    state = LabState(dir=str(lab_dir), ssh_port=ssh_port, brick_size=brick_size,
                     nodes=[NodeState(i, a, str(lab_dir / "nodes" / str(i))) for i, a in enumerate(addresses, 1)])
    state.save()  # recorded before anything starts, so an interrupted bring-up can be cleaned up

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
        _wait(lambda n=node: _port_open(n.address, GLUSTERD_PORT), 15, f"glusterd on {node.address}")  # type: ignore[misc]
        _wait(lambda n=node: Path(n.socket).exists(), 15, f"glusterd socket of {node.address}")  # type: ignore[misc]

    first = state.nodes[0]
    if nodes > 1:
        progress("probing peers into one trusted pool")
        for node in state.nodes[1:]:
            _run(gluster_argv("peer", "probe", node.address, socket=first.socket), timeout=60)
        _wait(lambda: _pool_connected(state), 60, "every peer to be connected")
    if link is not None:
        from .lab_links import show_rate

        progress(f"shaping every node's link to {show_rate(link)}")
        set_links(state, {n.address: link for n in state.nodes})
    if backing != "dir":
        progress(f"backing every node's bricks with {backing}")
        set_backing(state, {n.address: backing for n in state.nodes})
    _write_cluster_file(state)
    state.status = "up"
    state.save()
    progress(f"lab up: {nodes} node(s) at {addresses[0]}..{addresses[-1]}, cluster file {state.cluster_file}")
    return state


def _known(state: LabState, addresses: Mapping[str, object]) -> None:
    unknown = sorted(set(addresses) - {n.address for n in state.nodes})
    if unknown:
        raise LabError(f"no node {', '.join(unknown)} in the lab in {state.dir}")


def set_links(state: LabState, rates: Mapping[str, int | None]) -> None:
    """Give nodes a link rate (bit/s; None: unlimited) and apply every node's rate with tc (see lab_links)."""
    from . import lab_links

    _known(state, rates)
    links = {**state.links, **{a: r for a, r in rates.items() if r is not None}}
    for a, r in rates.items():
        if r is None:
            links.pop(a, None)
    if not state.shaping and links:
        foreign = lab_links.foreign_qdisc()
        if foreign:
            raise LabError(f"cannot shape the lab's links: {foreign}, which this lab did not add; if it is a "
                           f"leftover remove it (`tc qdisc del dev lo root`, `tc qdisc del dev lo ingress`, "
                           f"`ip link del {lab_links.IFB}`)")
        state.shaping = True
        state.save()  # recorded before anything is added, so lab down removes it even after a crash
    if state.shaping:
        lab_links.install(links)
    state.links = links
    state.shaping = bool(links)
    state.save()
    if state.status == "up":
        _write_cluster_file(state)  # its network label follows the shaping (the models use measured speeds)


def set_backing(state: LabState, kinds: Mapping[str, str], size: int | None = None) -> list[str]:
    """Give nodes a brick backing (dir, ext4, xfs, tmpfs; see lab_bricks); returns the nodes that changed.

    A node whose bricks directory holds anything (a volume's bricks) is refused: its data would be lost.
    """
    from . import lab_bricks

    _known(state, kinds)
    by_address = {n.address: n for n in state.nodes}
    size = size or state.brick_size
    wanted = {a: lab_bricks.parse_backing(k) for a, k in kinds.items()}
    changed = [a for a, k in wanted.items()
               if state.backing.get(a, "dir") != k or (k != "dir" and size != state.brick_size)]
    for address in changed:
        bricks = Path(by_address[address].bricks)
        used = [p.name for p in bricks.iterdir() if p.name != "lost+found"] if bricks.is_dir() else []
        if used:
            raise LabError(f"{address}: its bricks directory {bricks} is in use ({', '.join(sorted(used)[:3])}); "
                           f"delete the volumes on it first (glmodel volume teardown)")
    state.brick_size = size
    for address in changed:
        n = by_address[address]
        lab_bricks.detach(n.path, Path(n.bricks))
        state.backing.pop(address, None)
        if wanted[address] != "dir":
            state.backing[address] = wanted[address]
        state.save()  # recorded before it is mounted, so lab down undoes it even after a crash
        lab_bricks.attach(wanted[address], n.path, Path(n.bricks), size)
    if changed and state.status == "up":
        _write_cluster_file(state)
    return changed


def _pool_connected(state: LabState) -> bool:
    for node in state.nodes:
        proc = _run(gluster_argv("peer", "status", socket=node.socket, xml=True), check=False)
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

def lab_down(lab_dir: Path, progress: Progress = _quiet) -> list[str]:
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
        _run(["umount", "-l", target], check=False)
        done.append(f"unmounted {target}")
    if state is not None:
        alive = [n for n in state.nodes if Path(n.socket).exists() and _port_open(n.address, GLUSTERD_PORT)]
        if alive:
            sock = alive[0].socket
            vols = _run(gluster_argv("volume", "list", socket=sock), check=False, timeout=30)
            for vol in vols.stdout.split() if vols.returncode == 0 else []:
                if vol.startswith("No"):
                    break
                _run(gluster_argv("volume", "stop", vol, "force", socket=sock), check=False, timeout=60)
                done.append(f"stopped volume {vol}")
    if state is not None and state.shaping:
        from . import lab_links

        lab_links.remove()
        done.append("removed link shaping")
    pids = lab_pids(lab_dir)
    if pids:
        _terminate(pids)
        done.append(f"ended {len(pids)} process(es)")
    for target in lab_mounts(lab_dir):  # a client that died late may have left one more
        _run(["umount", "-l", target], check=False)
    if state is not None:
        from . import lab_bricks

        for n in state.nodes:  # detach checks what is there: an interrupted set_backing may have left an image
            lab_bricks.detach(n.path, Path(n.bricks))
        if state.backing:
            done.append("removed brick backings")
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
        gd = _port_open(node.address, GLUSTERD_PORT)
        sshd = _port_open(node.address, state.ssh_port)
        connected = 0
        if gd:
            proc = _run(gluster_argv("peer", "status", socket=node.socket, xml=True), check=False)
            try:
                connected = sum(p.connected for p in parse_peer_status_xml(proc.stdout))
            except Exception:  # noqa: BLE001 - status reports what it can
                connected = 0
        out.append(NodeStatus(node.address, gd, sshd, connected, len(state.nodes) - 1))
    return state, out


def node(lab_dir: Path, address_or_index: str) -> tuple[LabState, NodeState]:
    """Find one node of a lab by address (127.1.1.2) or index (2)."""
    state = LabState.load(lab_dir.expanduser().absolute())
    if state is None:
        raise LabError(f"no lab in {lab_dir}")
    for n in state.nodes:
        if address_or_index in (n.address, str(n.index), f"node{n.index}"):
            return state, n
    raise LabError(f"no node {address_or_index!r} in the lab in {lab_dir}")
