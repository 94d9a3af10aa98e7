"""`glmodel check`: is every host of a cluster ready for a campaign?

One SSH round trip per host runs a probe script built from quoted argv pieces (``probe_script``); its
sectioned output is parsed (``parse_probe_output``) and judged (``judge_host``) by pure functions. A second,
tiny command reads the clock, because an offset estimate needs the shortest possible round trip.
"""

from __future__ import annotations

import shlex
import statistics
import time
from dataclasses import dataclass, field
from collections.abc import Mapping, Sequence
from typing import Any

from .config.cluster import Host
from .hardware.cpu_share import machine_notes
from .hardware.emulation import describe_record, knob_files, record_path, status_script
from .hardware.knobs.latency import STATUSFILE as DELAYER_STATUS
from .hardware.facts import HostFacts
from .errors import ConfigError, ConnectError, GlmodelError, HostKeyError, MultiHostError, ParseError, RemoteError
from .gluster.cli import GlusterCommandError, gluster_argv, parse_peer_status_xml, parse_version
from .hardware.limits import (LIMITS_SCRIPT, SCORE_BYTES, cpu_score_script, parse_cpu_score, parse_limits,
                         parse_throttles, throttle_script)
from .hardware.disk import show_limits
from .hardware.link import host_state_script, parse_state, show_rate
from .hardware.nic import nic_script, parse_nic, show_nic
from .remote.executor import Executor, shell
from .remote.sections import parse_sections, section
from .bench.engine_specs import ENGINE_SPECS, FIO_TOOL, ToolCheck

# The programs the trial engines need on every client; iperf3 measures every host's link, fio every brick.
CLIENT_TOOLS = tuple(s.tool for s in ENGINE_SPECS.values() if s.tool is not None)
IPERF_TOOL = ToolCheck("iperf3", "command -v iperf3 >/dev/null && iperf3 --version | head -n1",
                       "install it: apt-get install iperf3")


def host_tools(host: Host) -> list[ToolCheck]:
    """The programs `check` looks for on ``host``, each once: iperf3, fio on a server, the engines' on a client."""
    tools = [IPERF_TOOL, *([FIO_TOOL] if host.is_server else []), *(CLIENT_TOOLS if host.is_client else ())]
    return list({t.name: t for t in tools}.values())


TOOL_NAMES = tuple(dict.fromkeys(t.name for t in (IPERF_TOOL, FIO_TOOL, *CLIENT_TOOLS)))



@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass
class HostReport:
    host: Host
    checks: list[Check] = field(default_factory=list)
    facts: dict[str, object] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]


def probe_script(host: Host, record: str | None = None, delayer_status: str | None = None) -> str:
    """A POSIX sh script that prints every fact `check` needs about one host, in marked sections (with
    ``record``, also how many undo commands of emulated hardware the host holds there, and with
    ``delayer_status`` how late an emulated delay's delayer has let packets through)."""
    parts = [
        section("kernel", ["uname", "-r"]),
        section("boot", ["cat", "/proc/sys/kernel/random/boot_id"]),
        section("meminfo", ["grep", "-E", "^(MemTotal|MemAvailable):", "/proc/meminfo"]),
        section("nproc", ["nproc"]),
        section("cpumodel", ["grep", "-m1", "^model name", "/proc/cpuinfo"]),
        section("os", ["sh", "-c", ". /etc/os-release && echo \"$PRETTY_NAME\""]),
        section("nic", ["sh", "-c", nic_script(host.address)]),
        section("limits", ["sh", "-c", LIMITS_SCRIPT]),
        section("shaping", ["sh", "-c", host_state_script(host.address)]),
        *(section(t.name, ["sh", "-c", t.script]) for t in host_tools(host)),
    ]
    if record is not None:
        parts.append(section("emulation", ["sh", "-c", status_script(record, delayer_status)]))
    if host.is_server:
        parts += [
            section("gluster", ["gluster", "--version"]),
            section("peers", gluster_argv("peer", "status", socket=host.glusterd_socket, xml=True)),
        ]
        for i, path in enumerate(host.brick_paths):
            parts.append(section(f"brick{i}", ["df", "-B1", "--output=avail,fstype,target", path]))
        parts.append(section("throttle", ["sh", "-c", throttle_script(list(host.brick_paths))]))
    if host.is_client:
        parts.append(section("fuse", ["sh", "-c", "command -v mount.glusterfs && test -c /dev/fuse && echo fuse-ok"]))
    return "; ".join(parts)


def _limits_had(facts: dict[str, Any], sections: Mapping[str, tuple[int, str]]) -> list[str]:
    """The limits a host has in place, in words (its NIC's traffic control, the RAM and CPU of the group a
    command runs in, its bricks' block throttles): emulation keeps them as ceilings, or refuses what it cannot."""
    out: list[str] = []
    if "shaping" in sections:
        kind, rate = parse_state(sections["shaping"][1])
        if kind == "glmodel":
            out.append(f"NIC shaped by glmodel at {show_rate(rate)}")
        elif kind != "none":
            out.append(f"NIC traffic control glmodel did not set ({kind})")
    if isinstance(facts.get("ram_limit_bytes"), int):
        out.append(f"RAM {_fmt_bytes(float(facts['ram_limit_bytes']))}")
    if isinstance(facts.get("cpu_quota_cores"), (int, float)):
        out.append(f"CPU {facts['cpu_quota_cores']:g} core(s)")
    for path, brick in (facts.get("bricks") or {}).items():
        if isinstance(brick, dict) and brick.get("throttle"):
            out.append(f"brick {path} {show_limits(brick['throttle'])}")
    return out


def parse_probe_output(text: str, host: str | None = None) -> dict[str, tuple[int, str]]:
    """Split probe output into {section: (exit status, text)}; a missing end marker means truncated output."""
    return parse_sections(text, "check probe output", host)


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def judge_host(host: Host, sections: dict[str, tuple[int, str]], servers: list[Host],
               min_free_bytes: int) -> HostReport:
    """Turn one host's probe sections into facts and pass/fail checks with fixes."""
    rep = HostReport(host)
    rep.checks.append(Check("ssh", True, f"{host.ssh.user}@{host.address}:{host.ssh.port}"))

    def get(name: str) -> tuple[int, str]:
        if name not in sections:
            raise ParseError("check probe output", f"section '{name}' missing", host.address)
        return sections[name]

    rc, out = get("kernel")
    rep.facts["kernel"] = out
    if "boot" in sections and sections["boot"][0] == 0 and sections["boot"][1].strip():  # older captures lack it
        rep.facts["boot_id"] = sections["boot"][1].strip()  # hosts that show one share a machine
    rc, out = get("meminfo")
    # a line whose figure is not a count is garbled and left out: RAM unknown then fails the hardware check
    mem = {w[0].rstrip(":"): int(w[1]) * 1024 for w in map(str.split, out.splitlines()) if w[1:2] and w[1].isdecimal()}
    ram = mem.get("MemTotal")
    rc, out = get("nproc")
    cpus = int(out) if out.isdecimal() and int(out) > 0 else None
    rep.facts.update(ram_bytes=ram, mem_total_bytes=ram, cpus=cpus)
    if "limits" in sections:  # older captures lack it
        limits = parse_limits(sections["limits"][1], ram, cpus)
        rep.facts.update(limits)
        if ram and isinstance(limits["ram_limit_bytes"], int):
            # What a client's page cache can really hold: the regime and the models need this, not the DIMMs.
            rep.facts["ram_bytes"] = min(ram, limits["ram_limit_bytes"])
    rc, out = get("cpumodel")
    rep.facts["cpu_model"] = out.split(":", 1)[1].strip() if ":" in out else out
    rep.checks.append(Check("hardware", bool(ram and cpus), f"{cpus} CPU, {_fmt_bytes(float(ram or 0))} RAM"))
    for name in ("os", "nic"):
        if name in sections:  # older captures lack them; they are facts, not checks
            rc, out = sections[name]
            if name == "os":
                rep.facts["os"] = out if rc == 0 and out else None
            else:
                rep.facts.update(parse_nic(out))
                rep.checks.append(Check("nic", True, show_nic(rep.facts)))

    def tools(wanted: Sequence[ToolCheck]) -> None:
        for t in wanted:
            if any(c.name == t.name for c in rep.checks):
                continue  # a server's fio is the clients' too
            rc, out = get(t.name)
            lines = out.splitlines()
            found = lines[-1].strip() if rc == 0 and lines else None
            rep.facts[f"{t.name}_version"] = found
            rep.checks.append(Check(t.name, found is not None, found or "not found", "" if found else t.fix))

    tools([IPERF_TOOL])
    if host.is_server:
        rc, out = get("gluster")
        if rc == 0:
            version = parse_version(out)
            rep.facts["gluster_version"] = str(version)
            rep.checks.append(Check("gluster", True, f"GlusterFS {version}"))
        else:
            rep.checks.append(Check("gluster", False, "gluster CLI not found",
                                    "install it: apt-get install glusterfs-server"))
        tools([FIO_TOOL])
        rep.checks.append(_peer_check(host, get("peers"), servers))
        bricks: dict[str, dict[str, object]] = {}
        for i, path in enumerate(host.brick_paths):
            rep.checks.append(_brick_check(path, get(f"brick{i}"), min_free_bytes, bricks))
        if "throttle" in sections:
            for path, throttle in parse_throttles(sections["throttle"][1]).items():
                if path in bricks:
                    bricks[path]["throttle"] = throttle
        rep.facts["bricks"] = bricks
    had = _limits_had(rep.facts, sections)
    if had:  # what the host holds itself to already: ceilings every setting of a plan stays under
        rep.checks.append(Check("limits", True, "limits in place: " + "; ".join(had)))
    if host.is_client:
        tools(CLIENT_TOOLS)
        rc, out = get("fuse")
        rep.checks.append(Check("fuse", rc == 0, "mount.glusterfs and /dev/fuse present" if rc == 0 else
                                "mount.glusterfs or /dev/fuse missing",
                                "" if rc == 0 else "apt-get install glusterfs-client; load the fuse module"))
    return rep


def _peer_check(host: Host, section: tuple[int, str], servers: list[Host]) -> Check:
    rc, out = section
    fix_start = "start glusterd on this host"
    if "Connection failed" in out or (rc != 0 and "<cliOutput" not in out):
        return Check("glusterd", False, "glusterd not answering", fix_start)
    try:
        peers = parse_peer_status_xml(out)
    except (ParseError, GlusterCommandError) as exc:
        return Check("glusterd", False, str(exc), fix_start)
    others = [s for s in servers if s.address != host.address]
    by_name = {n: p for p in peers for n in p.hostnames}
    missing = [s.address for s in others if s.address not in by_name and s.name not in by_name]
    down = [s.address for s in others if (p := by_name.get(s.address) or by_name.get(s.name)) and not p.connected]
    if missing:
        return Check("glusterd", False, f"not in the trusted pool: {', '.join(missing)}",
                     f"gluster peer probe {missing[0]} (from {host.address})")
    if down:
        return Check("glusterd", False, f"peers disconnected: {', '.join(down)}",
                     f"check glusterd on {down[0]}")
    return Check("glusterd", True, f"running, {len(others)} peer(s) connected")


def _brick_check(path: str, section: tuple[int, str], min_free: int, bricks: dict[str, dict[str, object]]) -> Check:
    rc, out = section
    lines = out.splitlines()
    if rc != 0 or len(lines) < 2:
        if "No such file" in out:
            return Check(f"brick {path}", False, "path does not exist", f"create it: mkdir -p {shlex.quote(path)}")
        return Check(f"brick {path}", False, f"df failed: {lines[0] if lines else 'no output'}",
                     "check the path and its filesystem")
    fields = lines[-1].split()
    if len(fields) < 3 or not fields[0].isdecimal():
        raise ParseError("df output", f"unexpected line {lines[-1]!r}")
    avail, fstype = int(fields[0]), fields[1]
    bricks[path] = {"free_bytes": avail, "fstype": fstype}
    ok = avail >= min_free
    return Check(f"brick {path}", ok, f"{_fmt_bytes(avail)} free on {fstype}",
                 "" if ok else f"free space below {_fmt_bytes(min_free)}")


def clock_offsets(samples: dict[str, tuple[float, float, float]]) -> dict[str, tuple[float, float]]:
    """(offset from the median host, uncertainty) per host, from (local send, remote time, local receive).

    The remote reading is assumed to sit at the midpoint of the round trip (Cristian's algorithm), so the
    error of each estimate is at most half its round trip, which is returned as the uncertainty.
    """
    raw = {h: remote - (sent + received) / 2 for h, (sent, remote, received) in samples.items()}
    if not raw:
        return {}
    mid = statistics.median(raw.values())
    return {h: (raw[h] - mid, (received - sent) / 2) for h, (sent, _, received) in samples.items()}


@dataclass
class CheckResult:
    reports: list[HostReport]
    clock_offsets: dict[str, tuple[float, float]]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.reports)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "hosts": [
            {"host": r.host.address, "name": r.host.name, "roles": sorted(r.host.roles), "ok": r.ok,
             "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail, "fix": c.fix} for c in r.checks],
             "facts": r.facts} for r in self.reports]}

    def failure(self) -> str | None:
        """One line naming the hosts not ready and the first one's first failing check with its fix."""
        failing = [r for r in self.reports if not r.ok]
        if not failing:
            return None
        first = failing[0].failures()[0]
        return (f"{len(failing)} host(s) not ready: {', '.join(r.host.name for r in failing)}; "
                f"{failing[0].host.name}: {first.name}: {first.detail}" + (f" (fix: {first.fix})" if first.fix else ""))


def run_check(executor: Executor, *, min_free_bytes: int = 1 << 30,
              max_clock_offset: float = 1.0) -> CheckResult:
    """Probe every host in parallel and judge it. Unreachable hosts get a failed 'ssh' check, not an exception."""
    cluster = executor.cluster
    servers = list(cluster.servers)
    by_addr = {h.address: h for h in cluster.hosts}

    def probe(address: str) -> HostReport:
        host = by_addr[address]
        status = knob_files(cluster, address) + DELAYER_STATUS
        result = executor.run(address, shell(probe_script(host, record_path(cluster, host), status)), timeout=120,
                              check=False)
        sections = parse_probe_output(result.stdout, address)
        rep = judge_host(host, sections, servers, min_free_bytes)
        changes, what = describe_record(sections.get("emulation", (0, ""))[1])
        rep.facts["emulated_changes"] = changes
        if changes:
            # Left by a campaign that could not finish its restore: every figure measured now would be slowed.
            rep.checks.append(Check("emulation", False, f"{changes} emulated hardware change(s) still in place"
                                    + (f" ({what})" if what else ""),
                                    f"run `glmodel restore --cluster {cluster.source}`"))
        return rep

    def clock(address: str) -> tuple[float, float, float]:
        # Runs after every probe has finished, on open connections, and keeps the shortest of three round
        # trips: the estimate's error is bounded by half the round trip.
        best: tuple[float, float, float] | None = None
        for _ in range(3):
            sent = time.time()
            remote = executor.run(address, ["date", "+%s.%N"], timeout=30).stdout.strip()
            received = time.time()
            try:
                sample = (sent, float(remote), received)
            except ValueError:
                raise ParseError("date +%s.%N", f"not a number: {remote[:40]!r}", address) from None
            if best is None or received - sent < best[2] - best[0]:
                best = sample
        assert best is not None
        return best

    results, errors = executor.map([h.address for h in cluster.hosts], probe)
    samples, _ = executor.map(list(results), clock)
    reports: list[HostReport] = []
    for host in cluster.hosts:
        if host.address in results:
            reports.append(results[host.address])
        else:
            failure: GlmodelError = errors[host.address]
            detail = str(failure).removeprefix(f"{host.address}: ")
            if isinstance(failure, HostKeyError):
                check = Check("ssh", False, detail, f"run `glmodel trust --cluster {cluster.source}`")
            elif isinstance(failure, (ConnectError, ConfigError)):
                check = Check("ssh", False, detail, getattr(failure, "fix", "the file named is at fault, not the host"))
            else:
                check = Check("probe", False, detail, "run the command by hand on that host to see why")
            reports.append(HostReport(host, [check]))
    offsets = clock_offsets(samples)
    shared = machine_notes({r.host.name: HostFacts.read(r.facts) for r in reports if r.facts})
    for rep in reports:
        if rep.host.name in shared:  # what the models take as its CPU score (hardware/cpu_share.py)
            rep.checks.append(Check("machine", True, shared[rep.host.name]))
        if rep.host.address in offsets:
            off, err = offsets[rep.host.address]
            rep.facts["clock_offset_s"] = off
            rep.facts["clock_uncertainty_s"] = err
            # Only an offset beyond the limit by more than the measurement's own uncertainty fails.
            ok = abs(off) - err <= max_clock_offset
            rep.checks.append(Check("clock", ok, f"{off * 1000:+.0f} ± {err * 1000:.0f} ms from median",
                                    "" if ok else "synchronise clocks (chrony/ntp)"))
    return CheckResult(reports, offsets)


def gather_facts(executor: Executor) -> dict[str, HostFacts]:
    """Host facts (CPU and its score, RAM and its limit, kernel, OS, NIC, tool versions, brick filesystems and
    throttles) of every host, by address.

    Raises MultiHostError naming every host that could not be probed: a campaign's facts must be complete.
    """
    result = run_check(executor)
    unreachable = [RemoteError(r.host.address, c.detail) for r in result.reports for c in r.checks
                   if c.name in ("ssh", "probe") and not c.ok]
    if unreachable:
        raise MultiHostError(unreachable)
    found = {r.host.address: HostFacts.read({"name": r.host.name, "roles": sorted(r.host.roles), **r.facts})
             for r in result.reports}
    scores = cpu_scores(executor, found)
    return {a: f.model_copy(update={"cpu_score": scores[a]}) if a in scores else f for a, f in found.items()}


def score_plan(facts: Mapping[str, HostFacts], hosts: Sequence[str]) -> list[list[list[str]]]:
    """How to score ``hosts``' CPUs without one score measuring another's load: per machine (hosts with one boot
    id), groups of hosts under the same CPU limits (cores and quota), in order; the first host of a group is
    scored and the others take its score (one machine's cores under one limit are one CPU, scored once);
    machines are scored at once, the groups of one machine one after another. Hosts whose boot id is unknown
    are each a group of their own, all on one machine: one after another, as before boot ids were facts."""
    machines: dict[str, dict[tuple[object, ...], list[str]]] = {}
    for address in hosts:
        f = facts.get(address, HostFacts())
        boot = f.boot_id
        key: tuple[object, ...] = (f.cpus, f.cpu_quota_cores) if boot else (address,)
        machines.setdefault(str(boot or ""), {}).setdefault(key, []).append(address)
    return [list(groups.values()) for groups in machines.values()]


def cpu_scores(executor: Executor, facts: Mapping[str, HostFacts] | None = None) -> dict[str, float]:
    """Every host's CPU score (``cpu_score``), by address, as ``score_plan`` orders them (without ``facts``,
    every host alone, one after another)."""
    hosts = [h.address for h in executor.cluster.hosts]
    plan = score_plan(facts or {}, hosts)

    def machine(groups: list[list[str]]) -> dict[str, float]:
        out: dict[str, float] = {}
        for group in groups:
            score = cpu_score(executor, group[0])
            out.update({a: score for a in group})
        return out

    first = {groups[0][0]: groups for groups in plan}  # a machine goes by its first host's address
    results, errors = executor.map(list(first), lambda a: machine(first[a]), timeout=600)
    if errors:
        raise errors[next(iter(errors))] if len(errors) == 1 else MultiHostError(list(errors.values()))
    return {a: score for per_machine in results.values() for a, score in per_machine.items()}


def cpu_score(executor: Executor, address: str) -> float:
    """One host's CPU score (MB/s of SHA-256 by one process, under whatever quota it runs).

    Hosts are scored one after another: hosts that share cores (the lab's nodes, VMs on one machine) would
    otherwise slow each other down and the score would measure the crowd.
    """
    result = executor.run(address, shell(cpu_score_script()), timeout=120)
    return parse_cpu_score(result.stdout, SCORE_BYTES, address)
