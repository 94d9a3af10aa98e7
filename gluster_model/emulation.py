"""Slower hardware on any cluster, opt-in and always undone: each host's storage NIC shaped with tc.

A cluster file's ``emulation: {allow: true}`` lets a plan's ``link`` factor run on a real cluster, as on the lab:
before each setting, every host's NIC that holds its cluster address gets the rate both ways (``shaping``'s
commands, the ones the lab runs in its nodes). Only slower: a rate above a NIC's reported speed is refused,
naming the host and its speed.

Always undone. Before changing anything, a host records on itself, in ``<record_dir>/emulation-<address>.undo``,
the commands that undo the change; the campaign runs them at its end, on failure and on Ctrl-C; ``glmodel
restore`` runs whatever is recorded (idempotent), and ``glmodel check`` reports a record still there. The record
lives on the host, not only in the store, so a campaign killed with -9, or a store on another machine, cannot
leave a host slowed without a trace there.

Scripts are built by pure functions (every value quoted); ``apply_link``, ``restore`` and ``recorded`` are the
only places that run them.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from .config.cluster import ClusterSpec, Host
from .errors import ConfigError, GlmodelError, RemoteError
from .nic import nic_script, parse_nic
from .remote.executor import Executor, shell
from .shaping import removal_argv, shaping_argv, show_rate

EMULATED = ("link",)  # the plan factors a cluster (not a lab) can emulate
_NIC = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")  # a Linux interface name (IFNAMSIZ), nothing a shell would read


class EmulationError(GlmodelError):
    """Emulated hardware could not be set or undone on a host."""


def record_path(cluster: ClusterSpec, host: Host) -> str:
    """Where ``host`` records how to undo what glmodel changed on it (one file per address: lab nodes share a disk)."""
    return f"{cluster.emulation.record_dir.rstrip('/')}/emulation-{host.address}.undo"


def apply_script(record: str, undo: list[list[str]], do: list[list[str]]) -> str:
    """Shell text that appends the ``undo`` commands to the record first, then runs ``do``, stopping at a failure.

    The record's directory and file are root's alone (umask 077): ``restore`` executes what it holds.
    """
    directory = record.rsplit("/", 1)[0] or "/"
    lines = " ".join(shlex.quote(shlex.join(argv)) for argv in undo)
    steps = " && ".join(shlex.join(argv) for argv in do)
    return (f"umask 077 && mkdir -p {shlex.quote(directory)} && printf '%s\\n' {lines} >> {shlex.quote(record)}"
            + (f" && {steps}" if steps else ""))


def restore_script(record: str) -> str:
    """Shell text that runs every recorded undo command (each may find its change already gone), removes the
    record, and prints how many it ran ("restored N") or "none"."""
    r = shlex.quote(record)
    return (f'if [ -f {r} ]; then n=$(wc -l < {r}); sh {r} >/dev/null 2>&1; rm -f {r}; echo "restored $n"; '
            f"else echo none; fi")


def status_script(record: str) -> str:
    """Shell text that prints how many undo commands are recorded (0: nothing emulated on the host)."""
    r = shlex.quote(record)
    return f"if [ -f {r} ]; then wc -l < {r}; else echo 0; fi"


def check_factors(cluster: ClusterSpec, factors: list[str], source: str) -> None:
    """Refuse, in one line, hardware factors a real cluster cannot have (not allowed, or not emulated)."""
    if not factors:
        return
    name = factors[0]
    if not cluster.emulation.allow:
        raise ConfigError(source, f"factors.{name}",
                          f"{cluster.name} does not allow glmodel to change its hardware; set `emulation: {{allow: "
                          f"true}}` in {cluster.source} to let it shape the hosts' NICs (undone after the plan, "
                          f"or by `glmodel restore`), or remove '{name}'")
    other = [f for f in factors if f not in EMULATED]
    if other:
        raise ConfigError(source, f"factors.{other[0]}",
                          f"on a cluster (not a glmodel lab) glmodel emulates {', '.join(EMULATED)} only; remove "
                          f"'{other[0]}' or run the plan on `glmodel lab up`")


@dataclass(frozen=True)
class Nic:
    host: str
    name: str
    speed_mbps: int | None


def find_nic(executor: Executor, host: Host) -> Nic:
    """The interface that holds the host's cluster address, with its speed when the host reports one."""
    out = executor.run(host.address, shell(nic_script(host.address)), timeout=30).stdout
    facts = parse_nic(out)
    name = facts["nic"]
    if not isinstance(name, str) or not _NIC.match(name) or name == "lo":
        raise EmulationError(f"{host.address}: no network interface holds the address {host.address} (found "
                             f"{name!r}); glmodel shapes the NIC that carries the cluster's traffic")
    speed = facts["nic_speed_mbps"]
    return Nic(host.address, name, speed if isinstance(speed, int) else None)


def link_plan(nic: Nic, rate: int) -> tuple[list[list[str]], list[list[str]]]:
    """(undo, do) commands that give ``nic`` the rate; a rate above its reported speed is refused (pure)."""
    if nic.speed_mbps is not None and rate > nic.speed_mbps * 10**6:
        raise EmulationError(f"{nic.host}: {show_rate(rate)} is faster than its NIC {nic.name} "
                             f"({show_rate(nic.speed_mbps * 10**6)}); emulation only makes hardware slower")
    return removal_argv(nic.name), shaping_argv(nic.name, rate)


def apply_link(cluster: ClusterSpec, executor: Executor, rate: int | None) -> dict[str, str]:
    """Give every host's NIC ``rate`` (None: its own speed again); returns host -> NIC shaped.

    Whatever was recorded on a host is undone first, so a setting replaces the one before it. Every NIC is
    found and checked before any host is changed.
    """
    restore(cluster, executor, strict=True)
    if rate is None:
        return {}
    nics, errors = executor.map([h.address for h in cluster.hosts], lambda a: find_nic(executor, cluster.host(a)))
    if errors:
        raise next(iter(errors.values()))
    plans = {a: link_plan(nic, rate) for a, nic in nics.items()}

    def apply(address: str) -> str:
        undo, do = plans[address]
        executor.run(address, shell(apply_script(record_path(cluster, cluster.host(address)), undo, do)),
                     timeout=60)
        return nics[address].name

    done, errors = executor.map(list(plans), apply)
    if errors:
        restore(cluster, executor)  # what did get shaped goes back at once
        host, exc = next(iter(errors.items()))
        raise EmulationError(f"{host}: could not shape its NIC: {exc}")
    return done


def restore(cluster: ClusterSpec, executor: Executor, *, strict: bool = False) -> dict[str, str]:
    """Undo whatever each host recorded; host -> "restored N change(s)", "nothing to restore" or why not.

    With ``strict`` a host that cannot be reached is an error (a campaign must not start on a host it cannot
    put back); otherwise it is reported, and its record stays for the next ``restore``.
    """
    def one(address: str) -> str:
        out = executor.run(address, shell(restore_script(record_path(cluster, cluster.host(address)))),
                           timeout=60).stdout.strip()
        n = out.removeprefix("restored ").strip()
        return f"restored {n} change(s)" if out.startswith("restored") else "nothing to restore"

    done, errors = executor.map([h.address for h in cluster.hosts], one)
    if errors and strict:
        host, exc = next(iter(errors.items()))
        raise EmulationError(f"{host}: cannot undo its emulated hardware ({exc}); nothing was changed")
    for host, exc in errors.items():
        reason = str(exc).removeprefix(f"{host}: ") if isinstance(exc, RemoteError) else str(exc)
        done[host] = f"not reached ({reason}); its changes stay recorded on it: run `glmodel restore` again"
    return {h.address: done[h.address] for h in cluster.hosts}


def recorded(cluster: ClusterSpec, executor: Executor) -> dict[str, int]:
    """How many undo commands each reachable host holds (0: nothing of glmodel's is emulated there)."""
    def one(address: str) -> int:
        out = executor.run(address, shell(status_script(record_path(cluster, cluster.host(address)))),
                           timeout=30).stdout.strip()
        return int(out) if out.isdigit() else 0

    counts, _ = executor.map([h.address for h in cluster.hosts], one)
    return counts
