"""Round-trip time between each client and each server, measured as a TCP handshake to the server's glusterd.

A connect returns when the SYN-ACK arrives: one round trip, with no payload and no application behind it, so it
is the network's latency (and a lab's or an emulated delay), not a service's. The port is glusterd's management
port, which every client reaches to mount a volume, and not sshd's: sshd forks a process for every connection it
accepts, and on 8 lab nodes sharing two cores the 840 handshakes of one pass then took 1.1-2.4 s of wall time
(the forks' CPU) against 0.16-0.18 s to glusterd, with the same medians (0.020 ms). Each client connects ``count``
times to each server in turn (one pair at a time, so the pairs do not queue behind each other) and the median is
kept, in milliseconds. Runs with the host's python3, which the cluster's hosts have (Gluster's tools need it).
The script builder and parser are pure; ``run_rtt`` is the side effect.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable

from ..config.cluster import ClusterSpec
from ..gluster.cli import GLUSTERD_PORT
from ..remote.executor import Executor, shell
from .engine import Measured
from .jsonout import figure

COUNT = 15
_PROBE = """
import json, socket, statistics, sys, time
out = {}
for target in sys.argv[2:]:
    host, port = target.rsplit(":", 1)
    times = []
    try:
        for _ in range(int(sys.argv[1])):
            s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
            s.settimeout(5)
            t = time.perf_counter()
            s.connect((host, int(port)))
            times.append(time.perf_counter() - t)
            s.close()
        out[host] = statistics.median(times) * 1000
    except OSError as e:
        out[host] = str(e)
print(json.dumps(out))
"""


def probe_script(targets: list[tuple[str, int]], count: int = COUNT) -> str:
    """Shell text that prints {server: median ms, or the error} for connects to each (address, port)."""
    return shlex.join(["python3", "-c", _PROBE, str(count), *(f"{a}:{p}" for a, p in targets)])


def parse_probe(host: str, servers: list[str], out: str) -> list[Measured]:
    """The probe's JSON -> one ``network``/``rtt`` figure per server asked of (ms), an error where a connect
    failed, the probe printed no result for it, or what it printed is no round trip."""
    try:
        found = json.loads(out.strip().splitlines()[-1])
        if not isinstance(found, dict):
            raise ValueError("not an object")
    except (ValueError, IndexError) as exc:
        why = f"the round-trip probe printed no result ({exc}): {out.strip()[:200]!r}"
        return [Measured("network", host, s, "rtt", None, "ms", why) for s in servers]
    measured: list[Measured] = []
    for server in servers:  # each asked of, in order; a key the probe was not asked for is garbled output
        v = found.get(server, "the round-trip probe printed no result for it")
        try:
            measured.append(Measured("network", host, server, "rtt", figure(v), "ms", raw=out.strip()))
        except (TypeError, ValueError):  # the connect's error, or a number that is no round trip (NaN, < 0)
            why = str(v) if isinstance(v, str) else f"not a round trip: {v!r}"
            measured.append(Measured("network", host, server, "rtt", None, "ms", why[:200]))
    return measured


def run_rtt(executor: Executor, progress: Callable[[str], None] | None = None) -> list[Measured]:
    """Every client's round trip to every other server (all clients at once, each through its servers in turn)."""
    cluster: ClusterSpec = executor.cluster
    targets = {c.address: [(s.address, GLUSTERD_PORT) for s in cluster.servers if s.address != c.address]
               for c in cluster.clients}
    targets = {c: t for c, t in targets.items() if t}
    if not targets:
        return []
    if progress:
        progress(f"round trips: {sum(map(len, targets.values()))} pair(s)")
    results, errors = executor.map(list(targets), lambda a: executor.run(a, shell(probe_script(targets[a])),
                                                                          timeout=60))
    out: list[Measured] = []
    for client, pairs in targets.items():
        if client in errors:
            out += [Measured("network", client, s, "rtt", None, "ms", str(errors[client])) for s, _ in pairs]
        else:
            out += parse_probe(client, [s for s, _ in pairs], results[client].stdout)
    return out


def delay_missing(measured: list[Measured], delay_us: int) -> str | None:
    """What is wrong where a delay of ``delay_us`` on every host is missing from the round trips measured (its
    delayer ended, or a host kept its packets from it), or None. A packet each way is held, so twice the delay
    is the least a round trip can take; under 1.5 times it (a pair only one of whose hosts holds its packets has
    about one delay) the setting would be measured without its delay."""
    short = [m for m in measured if m.test == "rtt" and m.value is not None and m.value * 1000 < 1.5 * delay_us]
    if not short:
        return None
    m = short[0]
    return (f"{m.host} -> {m.target}: round trip {m.value:.3g} ms with {delay_us} us added to every packet a "
            f"host receives (at least {2 * delay_us / 1000:.3g} ms); {len(short)} of {len(measured)} pair(s) lack "
            "the delay: is the packet delayer (python3, `glmodel-delay`) running on each host?")
