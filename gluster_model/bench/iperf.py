"""iperf3 matrix: every client to every server at once, as Gluster's FUSE client talks to all brick servers.

One iperf3 server process per (server, client) pair listens on its own port (an iperf3 server serves one
test at a time), all pairs of a direction run concurrently, and every server is stopped afterwards even when
a client failed. Command builders and the ``-J`` parser are pure; ``run_iperf`` is the side effect.
"""

from __future__ import annotations

import shlex
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from pydantic import Field

from ..config.cluster import ClusterSpec, Frozen, Host
from ..processes import terminate_script
from ..errors import GlmodelError, ParseError
from ..hardware.link import host_state_script, parse_state
from ..remote.executor import CommandResult, Executor, shell
from ..remote.sections import begin, end, parse_sections
from .engine import Measured
from .jsonout import figure, find_json_object

# Clients start their pairs together a moment after the matrix is sent out (hosts' clocks must agree to well
# under it; `glmodel check` reports their offsets): long enough for every client's command to arrive, which is
# one command per host like starting the servers, and less work. A client that still starts more than LATE_S
# after the shared start is seen (each reports how late it began) and the pass measured again with a later one.
MIN_START_DELAY_S = 0.15
MAX_START_DELAY_S = 1.5
LATE_S = 0.1
PASS_TRIES = 3


def start_delay_ns(round_trip_s: float, tries: int = 0) -> int:
    """How far ahead to set the shared start: 1.5 times the slowest round trip just seen (starting the servers),
    within 0.15–1.5 s, doubled for each pass measured again because a client began late (``tries``).

    On 8 lab nodes, one times that round trip already had every client begin 1-35 ms after the start (four
    times: 4-35 ms; the rest is the shell's own wake-up), and cost 0.4-0.9 s a pass less.

    >>> start_delay_ns(0.01), start_delay_ns(0.2), start_delay_ns(3.0), start_delay_ns(0.2, tries=1)
    (150000000, 300000000, 1500000000, 600000000)
    """
    return int(min(max(1.5 * round_trip_s, MIN_START_DELAY_S) * 2 ** tries, MAX_START_DELAY_S * 2 ** tries) * 1e9)

Direction = Literal["write", "read"]


class IperfSpec(Frozen):
    seconds: int = Field(default=5, ge=1, le=3600, description="length of each measurement")
    omit: int = Field(default=1, ge=0, le=60, description="seconds of TCP slow start left out (-O)")
    streams: int = Field(default=1, ge=1, le=128, description="parallel TCP streams per pair (-P)")
    directions: list[Direction] = Field(default=["write", "read"], min_length=1,
                                        description="write: client to server; read: server to client (-R)")
    port: int = Field(default=5201, ge=1024, le=65000, description="first port; pair i uses port + i")


@dataclass(frozen=True)
class Pair:
    client: Host
    server: Host
    port: int


@dataclass(frozen=True)
class PairResult:
    client: str
    server: str
    direction: Direction
    sent_bps: float | None
    received_bps: float | None
    retransmits: int | None
    raw: str
    error: str | None = None


@dataclass
class IperfMatrix:
    spec: IperfSpec
    pairs: list[PairResult] = field(default_factory=list)

    def ok(self) -> list[PairResult]:
        return [p for p in self.pairs if p.error is None]

    def measured(self) -> list[Measured]:
        """Each pair's received rate, the figure the store keeps."""
        return [Measured("network", p.client, p.server, p.direction, p.received_bps, "bit/s", p.error, p.raw)
                for p in self.pairs]

    def to_json(self) -> dict[str, Any]:
        return {"pairs": [{k: v for k, v in asdict(p).items() if k != "raw"} for p in self.pairs],
                "aggregate_bps": {d: self.aggregate_bps(d) for d in self.spec.directions},
                "median_pair_bps": self.median_pair_bps()}

    def aggregate_bps(self, direction: Direction) -> float:
        """Sum of what receivers got over all concurrent pairs of one direction."""
        return sum(p.received_bps or 0.0 for p in self.ok() if p.direction == direction)

    def per_host_bps(self, direction: Direction) -> dict[str, float]:
        """Bandwidth each host moved in one direction, summed over its pairs (as client or server)."""
        out: dict[str, float] = {}
        for p in self.ok():
            if p.direction == direction:
                for h in (p.client, p.server):
                    out[h] = out.get(h, 0.0) + (p.received_bps or 0.0)
        return out

    def median_pair_bps(self) -> float | None:
        """The typical point-to-point bandwidth: the study's 'network bandwidth' feature."""
        values = [p.received_bps for p in self.ok() if p.received_bps]
        return statistics.median(values) if values else None


def plan_pairs(cluster: ClusterSpec, port: int) -> list[Pair]:
    """Each client with each server, skipping a host paired with itself unless nothing else exists."""
    pairs = [(c, s) for c in cluster.clients for s in cluster.servers if c.address != s.address]
    if not pairs:
        pairs = [(c, s) for c in cluster.clients for s in cluster.servers]
    # Ports are numbered per client, so all servers can use the same port for the same client.
    index = {c.address: i for i, c in enumerate(cluster.clients)}
    return [Pair(c, s, port + index[c.address]) for c, s in pairs]


def pidfile(run_id: str, server: Host, port: int) -> str:
    # Named by address as well: on the lab every node shares one /tmp.
    return f"/tmp/glmodel-iperf-{run_id}-{server.address}-{port}.pid"


def server_script(server: Host, ports: list[int], run_id: str, iperf3: str = "iperf3", wait_s: float = 10) -> str:
    """Start one daemonised one-shot iperf3 server per port, then wait until every port listens."""
    lines = []
    for port in ports:
        argv = [iperf3, "-s", "-D", "-1", "-B", server.address, "-p", str(port), "-I", pidfile(run_id, server, port)]
        lines.append(shlex.join(argv) + " || exit 1")
    checks = " && ".join(f"ss -Hltn {shlex.quote(f'sport = :{p}')} | grep -q ." for p in ports)
    tries = int(wait_s / 0.1)
    lines.append(f"i=0; until {checks}; do i=$((i+1)); [ $i -ge {tries} ] && "
                 f"{{ echo 'iperf3 server did not start listening' >&2; exit 1; }}; sleep 0.1; done")
    return "\n".join(lines)


def stop_script(run_id: str, server: Host) -> str:
    """Kill every server this run started on a host (by its pid file), wait up to 5 s for each to exit (then
    SIGKILL), and remove the pid files: a server still exiting when the run returns is a stray iperf3 on a
    loaded host (seen beside three labs on two cores)."""
    pattern = f"/tmp/glmodel-iperf-{run_id}-{server.address}-*.pid"
    end = terminate_script('"$p"')
    return f'for f in {pattern}; do [ -e "$f" ] || continue; p="$(cat "$f")"; {end}; rm -f "$f"; done; true'


def client_argv(pair: Pair, spec: IperfSpec, direction: Direction, iperf3: str = "iperf3") -> list[str]:
    argv = [iperf3, "-c", pair.server.address, "-p", str(pair.port), "-B", pair.client.address,
            "-t", str(spec.seconds), "-O", str(spec.omit), "-P", str(spec.streams), "-J"]
    if direction == "read":
        argv.append("-R")
    return argv


def client_script(pairs: list[Pair], spec: IperfSpec, direction: Direction, run_id: str,
                  start_ns: int | None = None) -> str:
    """Run all of one client's pairs at once; print each pair's JSON in a marked section with its exit status.

    ``start_ns``: wall-clock start (ns since the epoch) shared by every client, so pairs from different hosts
    overlap in time; a client that started late measures alone for a while and its figure overstates a shared
    link (one node at 1 gbit was seen receiving 1.26 Gbit/s summed over its pairs without it).
    """
    lines = []
    if start_ns is not None:
        # one sleep to the start (a polling loop woke up to 20 ms late), then how late the pairs began, in ns
        lines.append(f"d=$(( {int(start_ns)} - $(date +%s%N) )); [ \"$d\" -gt 0 ] && "
                     "sleep \"$((d / 1000000000)).$(printf %09d $((d % 1000000000)))\"; "
                     f"late=$(( $(date +%s%N) - {int(start_ns)} ))")
    outs = [f"/tmp/glmodel-iperf-{run_id}-{p.client.address}-{i}.json" for i, p in enumerate(pairs)]
    for i, pair in enumerate(pairs):
        out = outs[i]
        lines.append(f"{shlex.join(client_argv(pair, spec, direction))} > {out} 2>&1 & p{i}=$!")
    for i in range(len(pairs)):
        lines.append(f"wait $p{i}; r{i}=$?")
    if start_ns is not None:
        lines.append(begin("late") + 'echo "$late"; ' + end("late", "0"))
    for i, out in enumerate(outs):
        lines.append(begin(f"pair{i}") + f"cat {out}; rm -f {out}; " + end(f"pair{i}", f'"$r{i}"'))
    return "\n".join(lines)


def late_by(sections: dict[str, tuple[int, str]]) -> float:
    """Seconds after the shared start a client began its pairs (0 where its output does not say).

    >>> late_by({"late": (0, "35000000\\n")}), late_by({}), late_by({"late": (0, "garbled")})
    (0.035, 0.0, 0.0)
    """
    text = sections.get("late", (0, ""))[1].strip()
    return int(text) / 1e9 if text.lstrip("-").isdecimal() else 0.0


def parse_iperf_json(text: str, host: str | None = None) -> tuple[float, float, int | None]:
    """(sent bit/s, received bit/s, retransmits) of one iperf3 ``-J`` run.

    Raises ParseError for truncated or garbled output, and for a run iperf3 itself reports as failed
    (its ``error`` field, e.g. connection refused).
    """
    data = find_json_object(text, "iperf3 -J output", host)
    if data.get("error"):
        raise ParseError("iperf3 -J output", f"iperf3 reported: {data['error']}", host)
    endpart = data.get("end")
    if not isinstance(endpart, dict):
        raise ParseError("iperf3 -J output", "no 'end' summary", host)
    try:
        sent = endpart["sum_sent"]
        received = endpart["sum_received"]
        sent_bps, received_bps = figure(sent["bits_per_second"]), figure(received["bits_per_second"])
        retr = sent.get("retransmits")
        retransmits = int(figure(retr)) if isinstance(retr, int) else None
    except (KeyError, TypeError, ValueError):
        raise ParseError("iperf3 -J output", "'end' lacks sum_sent/sum_received bits_per_second (or one is not a "
                         "measured figure)", host) from None
    return sent_bps, received_bps, retransmits


def _same_flows(matrix: IperfMatrix, pairs: list[Pair], direction: Direction) -> list[PairResult] | None:
    """This direction's results taken from a pass already measured, when that pass moved the very same flows.

    A pass runs every pair of its direction at once: "write" sends client -> server, "read" server -> client.
    Where every client is also a server and the other way round (a hyperconverged cluster, the lab), the read
    pass's flows are the write pass's, all at once, with only the side that opened the connection swapped:
    measuring them again would repeat the pass (two to six seconds on the lab). The pair (c, s, read) is the
    flow s -> c, which the write pass measured as pair (s, c).
    """
    other: Direction = "write" if direction == "read" else "read"
    done = {(p.client, p.server): p for p in matrix.pairs if p.direction == other}
    if not done or any(p.error for p in done.values()) or \
            {(p.client.address, p.server.address) for p in pairs} != {(s, c) for c, s in done}:
        return None
    return [replace(done[(p.server.address, p.client.address)], client=p.client.address, server=p.server.address,
                    direction=direction) for p in pairs]


def _client_sections(out: str, address: str) -> tuple[dict[str, tuple[int, str]], str]:
    """A client's marked sections, and what a pair without its section failed with (the parse error, if any)."""
    try:
        return parse_sections(out, "iperf3 client output", address), f"{address}: no output for this pair"
    except ParseError as exc:
        return {}, str(exc)


def _one_pass(executor: Executor, spec: IperfSpec, pairs: list[Pair], by_client: dict[str, list[Pair]],
              direction: Direction, tries: int) -> tuple[dict[str, CommandResult], dict[str, GlmodelError]]:
    """Start a server per pair, run every client's pairs from one shared start, stop the servers (always)."""
    cluster = executor.cluster
    run_id = uuid.uuid4().hex[:10]
    servers = list(dict.fromkeys(p.server.address for p in pairs))
    try:
        by_server = {s: sorted({p.port for p in pairs if p.server.address == s}) for s in servers}
        sent = time.monotonic()
        # iperf3 measures a link's capacity: its servers and clients outside an emulated CPU quota (join_prefix)
        executor.run_many(servers, lambda a: shell(server_script(cluster.host(a), by_server[a], run_id)), timeout=60,
                          device=True)
        limit = spec.seconds + spec.omit + 60
        start = time.time_ns() + start_delay_ns(time.monotonic() - sent, tries)
        return executor.map(
            list(by_client), lambda a: executor.run(a, shell(client_script(by_client[a], spec, direction, run_id,
                                                                            start)), timeout=limit, check=False,
                                                    device=True),
            timeout=limit)
    finally:
        # Stop servers even if a client failed or we are interrupted; one-shot servers that served
        # their test are gone already and the loop skips them.
        executor.map(servers, lambda a: executor.run(a, shell(stop_script(run_id, cluster.host(a))), timeout=30,
                                                     check=False))


def run_iperf(executor: Executor, spec: IperfSpec,
              progress: Callable[[str], None] | None = None) -> IperfMatrix:
    """Measure every client-server pair, all pairs of a direction concurrently; one direction after the other.

    A failing pair is kept with its error and raw output; a server host that cannot start its iperf3
    servers raises (after stopping what did start).
    """
    cluster = executor.cluster
    pairs = plan_pairs(cluster, spec.port)
    if not pairs:
        raise GlmodelError(f"{cluster.source}: the iperf3 matrix needs at least one client and one server")
    matrix = IperfMatrix(spec)
    clients = list(dict.fromkeys(p.client.address for p in pairs))
    for direction in spec.directions:
        reused = _same_flows(matrix, pairs, direction)
        if reused is not None:
            if progress:
                progress(f"iperf3 {direction}: the other direction's pass measured these flows already")
            matrix.pairs.extend(reused)
            continue
        by_client = {c: [p for p in pairs if p.client.address == c] for c in clients}
        for tries in range(PASS_TRIES):
            if progress:
                progress(f"iperf3 {direction}: {len(pairs)} pair(s) for {spec.seconds}s"
                         + (" again, with a later start" if tries else ""))
            results, errors = _one_pass(executor, spec, pairs, by_client, direction, tries)
            parsed = {a: _client_sections(r.stdout, a) for a, r in results.items()}
            late = {a: late_by(sections) for a, (sections, _) in parsed.items()}
            behind = {a: t for a, t in late.items() if t > LATE_S}
            if not behind or tries == PASS_TRIES - 1:
                break
            if progress:
                worst = max(behind, key=behind.__getitem__)
                progress(f"iperf3 {direction}: {worst} began its pairs {behind[worst] * 1000:.0f} ms after the "
                         "shared start")
        for address, plist in by_client.items():
            if address in errors:
                for p in plist:
                    matrix.pairs.append(PairResult(p.client.address, p.server.address, direction, None, None, None,
                                                   "", str(errors[address])))
                continue
            out = results[address].stdout
            sections, failure = parsed[address]
            if address in behind:  # still late after PASS_TRIES passes: its pairs ran alone for a while
                for i, p in enumerate(plist):
                    matrix.pairs.append(PairResult(p.client.address, p.server.address, direction, None, None, None,
                                                   sections.get(f"pair{i}", (None, out))[1],
                                                   f"{address}: began its pairs {behind[address] * 1000:.0f} ms "
                                                   "after the other clients in every pass (alone on shared links "
                                                   "meanwhile: its figures would overstate them)"))
                continue
            for i, p in enumerate(plist):
                status, text = sections.get(f"pair{i}", (None, out))
                try:
                    sent, received, retr = parse_iperf_json(text, address)
                except ParseError as exc:
                    err: str | None = str(exc) if status is not None else failure
                    matrix.pairs.append(PairResult(p.client.address, p.server.address, direction, None, None, None,
                                                   text, err))
                else:
                    # A run that moved nothing (seen when a firewall eats the data connection) is no figure.
                    err = None if received > 0 else f"{address}: iperf3 to {p.server.address} received 0 bit/s"
                    matrix.pairs.append(PairResult(p.client.address, p.server.address, direction, sent, received,
                                                   retr, text, err))
    return matrix



# A host's total this close to its link's rate filled the link: iperf3 counts payload, the shaper the frames around
# it (on the lab's 1 gbit and 500 mbit links, 8 nodes, every host's total was 0.988-1.06 of its rate, alone and
# beside the disk baseline).
NET_AT_LIMIT = 0.95


def link_limits(executor: Executor) -> dict[str, int | None]:
    """Each host's link rate where glmodel's shaping holds it (a lab's link, emulation), None elsewhere (no
    shaping, a qdisc of the host's own, a host that cannot say): one command per host."""
    hosts = [h.address for h in executor.cluster.hosts]
    results, _ = executor.map(hosts, lambda a: executor.run(a, shell(host_state_script(a)), timeout=30, check=False))
    return {a: parse_state(results[a].stdout)[1] if a in results and results[a].exit_code == 0 else None
            for a in hosts}


def unheld_pairs(matrix: IperfMatrix, limits: dict[str, int | None], at: float = NET_AT_LIMIT) -> list[PairResult]:
    """The pairs whose figure no full link explains: a flow crosses its sender's link out and its receiver's
    link in, and where every pair of a pass ran at once, each flow's share is set by a link it crosses that is
    full (what max-min fair sharing of the links gives). A pair none of whose links is full (or limited) was held
    back by something else (the CPU of a shared machine, another measurement beside it), as was a failed pair.

    >>> from gluster_model.bench.iperf import IperfMatrix, IperfSpec, PairResult, unheld_pairs
    >>> m = IperfMatrix(IperfSpec(directions=["write"]), [PairResult("a", "b", "write", 1e9, 0.6e9, 0, ""),
    ...                                                    PairResult("a", "c", "write", 1e9, 0.4e9, 0, "")])
    >>> unheld_pairs(m, {"a": 10**9, "b": 10**9, "c": 10**9})
    []
    >>> [(p.client, p.server) for p in unheld_pairs(m, {"a": 2 * 10**9, "b": 10**9, "c": 10**9})]
    [('a', 'b'), ('a', 'c')]
    """
    out: list[PairResult] = []
    for direction in matrix.spec.directions:
        pairs = [p for p in matrix.pairs if p.direction == direction]
        flows = [((p.client, p.server) if direction == "write" else (p.server, p.client), p) for p in pairs]
        sent: dict[str, float] = {}
        received: dict[str, float] = {}
        for (src, dst), p in flows:
            sent[src] = sent.get(src, 0.0) + (p.received_bps or 0.0)
            received[dst] = received.get(dst, 0.0) + (p.received_bps or 0.0)

        def full(host: str, load: dict[str, float]) -> bool:
            rate = limits.get(host)
            return rate is not None and load.get(host, 0.0) >= at * rate

        out += [p for (src, dst), p in flows if p.error or not (full(src, sent) or full(dst, received))]
    return out
