"""The round-trip probe: its script run for real against a local listener (and a closed port), and its parser."""

from __future__ import annotations

import socket
import subprocess
import threading

from gluster_model.bench.rtt import parse_probe, probe_script


def test_the_probe_times_handshakes_and_names_a_refused_server() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = closed.getsockname()[1]
    closed.close()  # nothing listens there now

    def accept() -> None:
        for _ in range(5):
            listener.accept()[0].close()

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    out = subprocess.run(["sh", "-c", probe_script([("127.0.0.1", port)], count=5)], capture_output=True,
                         text=True, check=True, timeout=30).stdout
    (m,) = parse_probe("c1", ["127.0.0.1"], out)
    assert (m.kind, m.host, m.target, m.test, m.unit, m.error) == ("network", "c1", "127.0.0.1", "rtt", "ms", None)
    assert m.value is not None and 0 < m.value < 50  # loopback: well under a millisecond, even on a busy machine
    listener.close()
    out = subprocess.run(["sh", "-c", probe_script([("127.0.0.1", dead)], count=2)], capture_output=True,
                         text=True, check=True, timeout=30).stdout
    (m,) = parse_probe("c1", ["127.0.0.1"], out)
    assert m.value is None and "refused" in (m.error or "").lower()


def test_a_probe_that_printed_nothing_is_an_error_per_server_not_a_crash() -> None:
    got = parse_probe("c1", ["s1", "s2"], "python3: command not found\n")
    assert [(m.target, m.value) for m in got] == [("s1", None), ("s2", None)]
    assert all("printed no result" in (m.error or "") for m in got)


def test_a_delay_missing_from_the_round_trips_is_named() -> None:
    """1 ms on every host makes every round trip at least 2 ms; a pair at 1.1 ms has one delay (one host's
    delayer ended), one at 0.05 ms none; a refused pair (no figure) is no evidence either way."""
    from gluster_model.bench.engine import Measured
    from gluster_model.bench.rtt import delay_missing

    def rtt(target: str, ms: float | None) -> Measured:
        return Measured("network", "10.0.0.9", target, "rtt", ms, "ms", None if ms is not None else "refused")

    held = [rtt("10.0.0.1", 2.2), rtt("10.0.0.2", 2.05), rtt("10.0.0.3", None)]
    assert delay_missing(held, 1000) is None
    said = delay_missing([*held, rtt("10.0.0.4", 1.1), rtt("10.0.0.5", 0.05)], 1000)
    assert said is not None and said.startswith("10.0.0.9 -> 10.0.0.4: round trip 1.1 ms")
    assert "2 of 5 pair(s) lack the delay" in said and "\n" not in said
    assert delay_missing([rtt("10.0.0.1", 0.7)], 500) is not None  # 1.4 delays: one host's alone and jitter
