"""Apply and tear down volumes, mount clients, drop caches: the gluster side effects, through an executor."""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..config.cluster import ClusterSpec, Host
from ..errors import CommandFailed, ConnectError, GlmodelError
from ..remote.executor import Executor, shell, silent_servers
from .cli import GlusterCommandError, GlusterVersion, parse_version
from .tunables import TUNABLE_KEYS
from .volume import (
    BrickStatus,
    VolumeConfig,
    VolumeInfo,
    VolumePlan,
    parse_heal,
    parse_help_xml,
    parse_volume_get_xml,
    parse_volume_info_xml,
    parse_volume_status_xml,
    plan_volume,
    values_match,
    volume_argv,
)


class VolumeError(GlmodelError):
    """The servers did not end up with the volume we asked for."""


@dataclass(frozen=True)
class ApplyResult:
    action: Literal["created", "reconfigured", "unchanged"]
    info: VolumeInfo
    options: dict[str, str]  # every option glmodel set, as read back from the server
    plan: VolumePlan


def _admin(cluster: ClusterSpec) -> Host:
    """The server glmodel sends gluster CLI commands to."""
    return cluster.servers[0]


def _gluster(executor: Executor, host: Host, *args: str, xml: bool = False, timeout: float = 180) -> str:
    return executor.run(host.address, volume_argv(host, *args, xml=xml), timeout=timeout).stdout


# What glusterd answers while a peer is still reconnecting (after a restart or a network fault) or another
# command holds the cluster-wide lock: the same command succeeds once the peers are back.
TRANSIENT = re.compile(r"Staging failed|Locking failed|Another transaction is in progress|"
                       r"not in 'Peer in Cluster' state|is not connected|disconnected", re.I)


def _gluster_settled(executor: Executor, host: Host, *args: str, wait_s: float = 60) -> str:
    """``_gluster`` for a cluster-wide change, tried again while glusterd's answer is TRANSIENT, unless a server
    was found not answering: its peer will not reconnect while it is silent, so waiting would only delay the
    error, which then names it."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return _gluster(executor, host, *args)
        except CommandFailed as exc:
            if not TRANSIENT.search(exc.stderr) or time.monotonic() > deadline:
                raise
            down = silent_servers(executor)
            if down:
                raise ConnectError(down[0], f"{executor.silent()[down[0]]} (`{shlex.join(args[:2])}` on "
                                   f"{host.address} waits for it: {exc.stderr.strip().splitlines()[0][:160]})") \
                    from None
        time.sleep(2)


def server_version(executor: Executor) -> GlusterVersion:
    cluster = executor.cluster
    host = _admin(cluster)
    return parse_version(executor.run(host.address, ["gluster", "--version"], timeout=30).stdout)


def server_options(executor: Executor) -> dict[str, str]:
    """The options the servers' Gluster documents (`gluster volume set help-xml`), with their defaults."""
    host = _admin(executor.cluster)
    return parse_help_xml(_gluster(executor, host, "volume", "set", "help-xml", timeout=60), host.address)


def check_tunables(executor: Executor, wanted: dict[str, str], version: GlusterVersion) -> None:
    """Refuse, in one line and before any change, an option of glmodel's tunables the servers' Gluster does not
    have (an older release; free-form volume_options are checked by `volume set` itself)."""
    asked = [k for k in wanted if k in TUNABLE_KEYS]
    if not asked:
        return
    known = server_options(executor)
    missing = [k for k in asked if k not in known]
    if missing:
        host = _admin(executor.cluster).address
        raise VolumeError(f"GlusterFS {version} on {host} has no option {', '.join(missing)} (its `gluster volume "
                          "set help`); leave the factor setting it out of the plan")


def volume_info(executor: Executor, name: str) -> VolumeInfo | None:
    cluster = executor.cluster
    host = _admin(cluster)
    result = executor.run(host.address, volume_argv(host, "volume", "info", name, xml=True), timeout=60, check=False)
    if "<cliOutput" not in result.stdout:  # no answer from glusterd at all (not running, its socket gone)
        said = (result.stderr.strip() or result.stdout.strip() or f"exit status {result.exit_code}").splitlines()[0]
        raise VolumeError(f"{host.address}: `gluster volume info {name}`: {said}")
    try:
        vols = parse_volume_info_xml(result.stdout)
    except GlusterCommandError:
        return None  # "Volume X does not exist"
    return vols[0] if vols else None


def read_options(executor: Executor, name: str) -> dict[str, str]:
    """Every option's effective value (defaults included), in one call."""
    cluster = executor.cluster
    return parse_volume_get_xml(_gluster(executor, _admin(cluster), "volume", "get", name, "all", xml=True))


def _same_layout(plan: VolumePlan, info: VolumeInfo) -> bool:
    c = plan.config
    return (info.bricks == tuple(b.spec for b in plan.bricks)
            and (info.replica if c.layout == "replicate" else 1) == (c.replica or 1)
            and (info.disperse if c.layout == "disperse" else 0) == (c.disperse or 0)
            and (info.arbiter or 0) == (c.arbiter or 0))


def _prepare_bricks(executor: Executor, plan: VolumePlan) -> None:
    """Fresh brick directories: old extended attributes from an earlier volume would make create fail."""
    by_host: dict[str, list[str]] = {}
    for b in plan.bricks:
        by_host.setdefault(b.host.address, []).append(b.path)
    executor.run_many(by_host, lambda a: shell(
        f"rm -rf -- {' '.join(map(shlex.quote, by_host[a]))} && mkdir -p -- {' '.join(map(shlex.quote, by_host[a]))}"))


def _remove_bricks(executor: Executor, bricks: tuple[str, ...]) -> None:
    by_host: dict[str, list[str]] = {}
    for spec in bricks:
        host, _, path = spec.rpartition(":")
        by_host.setdefault(host, []).append(path)
    executor.run_many(by_host, lambda a: ["rm", "-rf", "--", *by_host[a]])


def _set_options(executor: Executor, name: str, options: dict[str, str]) -> None:
    """All options in one `volume set` (the CLI takes several key/value pairs): one glusterd transaction."""
    cluster = executor.cluster
    if options:
        _gluster(executor, _admin(cluster), "volume", "set", name,
                 *(part for kv in options.items() for part in kv))


def _set_and_verify(executor: Executor, name: str, wanted: dict[str, str],
                    current: dict[str, str]) -> dict[str, str]:
    differ = {k: v for k, v in wanted.items() if k not in current or not values_match(v, current[k])}
    _set_options(executor, name, differ)
    after = read_options(executor, name) if differ else current  # nothing set: nothing to read again
    wrong = [f"{k}={after.get(k, '<missing>')} (wanted {v})" for k, v in wanted.items()
             if k not in after or not values_match(v, after[k])]
    if wrong:
        raise VolumeError(f"volume {name}: server did not take option(s) {', '.join(wrong)}")
    return {k: after[k] for k in wanted}


def apply_volume(executor: Executor, config: VolumeConfig, source: str = "volume",
                 version: GlusterVersion | None = None) -> ApplyResult:
    """Make the volume exist as configured: create it, change only options, or do nothing if it already is.

    ``version`` saves a round trip when the caller already knows the servers' Gluster version.
    """
    cluster = executor.cluster
    version = version or server_version(executor)
    plan = plan_volume(config, cluster, version, source)
    wanted = config.volume_options()
    check_tunables(executor, wanted, version)
    existing = volume_info(executor, config.name)
    if existing is not None and _same_layout(plan, existing) and existing.status == "Started":
        current = read_options(executor, config.name)
        if all(k in current and values_match(v, current[k]) for k, v in wanted.items()):
            return ApplyResult("unchanged", existing, {k: current[k] for k in wanted}, plan)
        read_back = _set_and_verify(executor, config.name, wanted, current)
        return ApplyResult("reconfigured", existing, read_back, plan)
    if existing is not None:
        teardown_volume(executor, config.name)
    admin = _admin(cluster)
    _prepare_bricks(executor, plan)
    _gluster(executor, admin, *plan.create_args())
    # Options go in before start, so the bricks start once with their final graph.
    _set_options(executor, config.name, wanted)
    _gluster(executor, admin, "volume", "start", config.name)
    read_back = _set_and_verify(executor, config.name, wanted, read_options(executor, config.name))
    info = volume_info(executor, config.name)
    if info is None or info.status != "Started":
        raise VolumeError(f"volume {config.name} was created but is not started")
    return ApplyResult("created", info, read_back, plan)


def teardown_volume(executor: Executor, name: str) -> bool:
    """Unmount it everywhere, stop and delete it, remove its brick directories. False if it did not exist."""
    cluster = executor.cluster
    info = volume_info(executor, name)
    if info is None:
        return False
    unmount(executor, name)
    admin = _admin(cluster)
    if info.status == "Started":
        _end_bricks(executor, name)
        _gluster_settled(executor, admin, "volume", "stop", name, "force")
    _gluster_settled(executor, admin, "volume", "delete", name)
    _remove_bricks(executor, info.bricks)
    return True


def remove_leftover(executor: Executor, config: VolumeConfig, version: GlusterVersion | None = None,
                    source: str = "plan") -> bool:
    """A volume of a run that was killed (kill -9 skips every teardown): torn down if the servers know it, else
    its brick directories (named for it, under the cluster's brick paths: glmodel's own) removed where they
    were left; True if anything was there."""
    if teardown_volume(executor, config.name):
        return True
    plan = plan_volume(config, executor.cluster, version or server_version(executor), source)
    by_host: dict[str, list[str]] = {}
    for b in plan.bricks:
        by_host.setdefault(b.host.address, []).append(b.path)
    found = executor.run_many(by_host, lambda a: shell(
        "n=0; for d in " + " ".join(map(shlex.quote, by_host[a])) + '; do if [ -e "$d" ]; then rm -rf -- "$d"; '
        'n=$((n+1)); fi; done; echo "$n"'))
    return any(r.stdout.strip() not in ("", "0") for r in found.values())


def _brick_host(cluster: ClusterSpec, name: str, brick: BrickStatus) -> Host:
    host = next((h for h in cluster.hosts if brick.host in (h.address, h.name)), None)
    if host is None:
        raise VolumeError(f"volume {name}: brick host {brick.host!r} is not in {cluster.source}")
    return host


def end_brick_script(pids: list[int], wait_s: float = 10) -> str:
    """SIGTERM each pid that is a glusterfsd (and only then), and wait until none of them is one any more.

    The check on /proc/PID/cmdline keeps a pid that was reused meanwhile from being signalled; a zombie's
    cmdline is empty, so a dead brick that nothing has reaped yet counts as gone. Exits 2 if no pid was a
    brick to signal, 1 if one outlives ``wait_s``.
    """
    ids = " ".join(str(int(p)) for p in pids)  # int(): only digits reach the shell
    is_brick = 'grep -qa glusterfsd "/proc/$p/cmdline" 2>/dev/null'
    return (f"sent=0; for p in {ids}; do {is_brick} && kill -TERM \"$p\" && sent=1; done; [ $sent = 1 ] || exit 2; "
            f"i=0; while [ $i -lt {max(1, int(wait_s * 20))} ]; do alive=0; "
            f"for p in {ids}; do {is_brick} && alive=1; done; [ $alive = 0 ] && exit 0; sleep 0.05; i=$((i+1)); "
            "done; exit 1")


def _end_bricks(executor: Executor, name: str) -> None:
    """End a volume's brick processes ourselves, just before `volume stop force` is sent (best effort).

    glusterd sleeps a fixed second after signalling a brick process, and again for the self-heal daemon's
    graph: `volume stop force` took 2.07 s on the lab for a 3-brick volume, 0.06 s once its bricks had exited.
    The volume is being deleted and its bricks removed, so nothing is lost by ending them first; anything that
    goes wrong here leaves the stop to glusterd as before.
    """
    cluster = executor.cluster
    try:
        by_host: dict[str, list[int]] = {}
        for b in brick_status(executor, name):
            if b.pid is not None and b.online:
                by_host.setdefault(_brick_host(cluster, name, b).address, []).append(b.pid)
        executor.run_many(by_host, lambda a: shell(end_brick_script(by_host[a])), timeout=30, check=False)
    except GlmodelError:
        pass


# -- degraded operation ---------------------------------------------------------------------------------------

def brick_status(executor: Executor, name: str) -> list[BrickStatus]:
    cluster = executor.cluster
    return parse_volume_status_xml(_gluster(executor, _admin(cluster), "volume", "status", name, xml=True, timeout=60))


def heal_pending(executor: Executor, name: str) -> int | None:
    """Entries the self-heal daemon still has to heal (None: not a replicated volume, or no answer).
    ``heal-count`` is answered by glusterd and the daemon; ``heal info`` would start glfsheal, which cannot reach
    a lab's per-node glusterd."""
    host = _admin(executor.cluster)
    res = executor.run(host.address, volume_argv(host, "volume", "heal", name, "statistics", "heal-count"),
                       timeout=60, check=False)
    return parse_heal(res.stdout) if res.ok else None


def wait_healed(executor: Executor, name: str, timeout: float = 60) -> int | None:
    """Wait (at most ``timeout`` seconds) until no entry awaits healing; the count left (0 or None when done)."""
    deadline = time.monotonic() + timeout
    while True:
        left = heal_pending(executor, name)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def stop_one_brick(executor: Executor, name: str) -> BrickStatus:
    """Kill the brick process serving the last brick of the first replica set, as a failed server would leave
    it: the volume stays up on the other copies (degraded). Bring it back with ``start_bricks``.

    The self-heal daemon is given time to finish first: a file written while the victim was away (a client
    reconnects to a restarted brick seconds after glusterd reports it online) has its only good copy on the
    other bricks until healed, and one whose heal is under way when a copy dies can fail to open with EIO; a
    failed server on a healthy volume leaves neither."""
    cluster = executor.cluster
    wait_healed(executor, name)
    bricks = brick_status(executor, name)
    info = volume_info(executor, name)
    if info is None or info.replica < 2 or not bricks:
        raise VolumeError(f"volume {name} has no second copy: a brick can only be stopped on a replicated volume")
    victim = bricks[info.replica - 1]
    if victim.pid is None or not victim.online:
        raise VolumeError(f"volume {name}: brick {victim.host}:{victim.path} is not running, cannot stop it")
    host = _brick_host(cluster, name, victim)
    # Only a pid the volume's own status names, and only after checking it is that brick's glusterfsd. SIGTERM:
    # the brick exits at once and removes its pidfile; after SIGKILL, where nothing reaps the dead process (a
    # container without an init), glusterd would find the zombie, take the brick for running, and never restart it.
    executor.run(host.address, shell(end_brick_script([victim.pid])), timeout=30)
    _wait_bricks(executor, name, lambda b: not any(x.path == victim.path and x.online for x in b),
                 "stop", 30)
    return victim


def _wait_bricks(executor: Executor, name: str, done: Callable[[list[BrickStatus]], bool],
                 what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        bricks = brick_status(executor, name)
        if done(bricks):
            return
        if time.monotonic() > deadline:
            down = [b.host + ":" + b.path for b in bricks if not b.online]
            raise VolumeError(f"volume {name}: bricks did not {what} within {timeout:g}s (offline: "
                              f"{', '.join(down) or 'none'})")
        time.sleep(0.3)


def start_bricks(executor: Executor, name: str, timeout: float = 60) -> None:
    """Restart every brick of a started volume that is down (``volume start force``) and wait until all are
    online again."""
    cluster = executor.cluster
    _gluster(executor, _admin(cluster), "volume", "start", name, "force")
    _wait_bricks(executor, name, lambda b: all(x.online for x in b), "come back", timeout)


# -- clients ---------------------------------------------------------------------------------------------------

def mount_point(host: Host, volume: str) -> str:
    return f"{host.mount_root}/{volume}"


def mount_options(backups: list[str], source_address: str | None) -> str:
    """The FUSE mount's -o: backup volfile servers, and the address the client connects to bricks from.

    Without a source address the kernel picks one by route, which on a multi-homed client (or the lab, where
    it is 127.0.0.1) is not the NIC the client is meant to use.
    """
    opts = [f"backup-volfile-servers={':'.join(backups)}"] if backups else []
    if source_address:
        opts.append(f"xlator-option=*.transport.socket.source-addr={source_address}")
    return ",".join(opts) or "defaults"


def mount(executor: Executor, volume: str, clients: list[Host] | None = None) -> dict[str, str]:
    """Mount the volume with the FUSE native client on every client (idempotent). Returns host -> mount point."""
    cluster = executor.cluster
    targets = clients if clients is not None else list(cluster.clients)
    servers = [h.address for h in cluster.servers]
    primary, backups = servers[0], servers[1:]
    points = {h.address: mount_point(h, volume) for h in targets}

    def script(address: str) -> list[str]:
        mp = shlex.quote(points[address])
        opts = mount_options(backups, cluster.host(address).source_address)
        src = shlex.quote(f"{primary}:/{volume}")
        # Already mounted is fine; a stale mount (dead client) is cleared first.
        return shell(
            f"mkdir -p {mp}; if mountpoint -q {mp}; then stat {mp} >/dev/null 2>&1 && exit 0; umount -l {mp}; fi; "
            f"mount -t glusterfs -o {shlex.quote(opts)} {src} {mp} && stat {mp} >/dev/null")

    executor.run_many(points, script, timeout=120)
    return points


def unmount(executor: Executor, volume: str, clients: list[Host] | None = None) -> None:
    cluster = executor.cluster
    targets = clients if clients is not None else list(cluster.clients)
    points = {h.address: mount_point(h, volume) for h in targets}
    # With a server found silent a plain umount waits for the client's requests to it (tens of seconds, up to
    # Gluster's ping timeout); a lazy one detaches the mount at once and the client ends once they fail. A plain
    # one is bounded too: one whose client was flushing writes to full bricks hung past the command's 120 s (the
    # lab, a tmpfs brick filled by iozone), so after 30 s it is killed and the mount detached lazily.
    plain = "" if silent_servers(executor) else "timeout -k 5 30 umount {p} 2>/dev/null || "
    # /proc/mounts first: `mountpoint` stats the mount, and a stat of a volume with a silent brick waits too
    executor.run_many(points, lambda a: shell(
        f"if grep -qs {shlex.quote(' ' + points[a] + ' ')} /proc/mounts || mountpoint -q {shlex.quote(points[a])}; "
        "then " + plain.format(p=shlex.quote(points[a])) + f"umount -l {shlex.quote(points[a])}; fi"), timeout=120)


def remount(executor: Executor, volume: str, clients: list[Host] | None = None) -> dict[str, str]:
    """Needed after translator changes: client-side translators live in the client process."""
    unmount(executor, volume, clients)
    return mount(executor, volume, clients)


def drop_caches(executor: Executor, hosts: list[Host] | None = None) -> None:
    """Flush dirty pages and drop page, dentry and inode caches on clients and servers."""
    cluster = executor.cluster
    targets = [h.address for h in (hosts if hosts is not None else cluster.hosts)]
    executor.run_many(targets, shell("sync; echo 3 > /proc/sys/vm/drop_caches"), timeout=300)


def mounted(executor: Executor, host: Host, volume: str) -> bool:
    try:
        executor.run(host.address, ["mountpoint", "-q", mount_point(host, volume)], timeout=30)
    except CommandFailed:
        return False
    return True

