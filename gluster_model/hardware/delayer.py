"""Hold every packet a node receives for a fixed time, then let it through: network latency without netem.

Where the kernel has no ``sch_netem`` (this lab's has neither it nor ``sch_fq``), a round trip can still be
made longer in user space: an iptables rule sends each packet arriving on the NIC to an NFQUEUE, and this
process gives each one its ACCEPT verdict ``delay`` after it arrived. Only the packets' metadata cross into
user space (copy mode META; GSO packets whole), so a Python loop keeps up with a shaped 1 Gbit/s link.

Why on receive (iptables INPUT) and not on send: a packet held on the sending side is still charged to its
socket, and TCP's small-queue limit then stalls the sender at a few packets in flight, capping throughput at
a few hundred KB per delay; a received packet is no longer any socket's. Delaying every node's received
packets by d makes every round trip between two nodes 2·d longer.

A packet is held from when the kernel received it (its receive timestamp, which the queue passes on once any
socket asks for timestamps, as this process does), not from when this process read it, and the process runs
at the highest CPU priority it may have: a late wake-up would otherwise add itself to every delay, and more
as the host gets busier. On the lab at 500 us and a busy two-core machine (8 KiB creates at 230 a second), the
old delayer held packets 180-270 us beyond the delay, against 90-150 us at 2 ms, so a shorter delay made a
longer round trip under load than the one measured at rest; stamped and prioritised, 50-80 us at both.

Standard library only, so the same file runs on a cluster's host (``python3 delayer.py``). Speaks the
nfnetlink_queue protocol directly (linux/netfilter/nfnetlink_queue.h): bind a queue, set copy mode and flags,
read packet ids and timestamps, answer with batch verdicts (a queue with one fixed delay releases packets in
arrival order, and ids rise with arrival, so one verdict releases every packet that is due). With
``--status FILE`` it writes, every few seconds, how many packets it held, how many had the kernel's
timestamp, and how late beyond the delay it let them through (mean and largest, µs).

    python3 -m gluster_model.hardware.delayer --delay-us 500 [--queue N] [--ready FILE] [--status FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from collections import deque

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG, NFQNL_MSG_VERDICT_BATCH = 0, 1, 2, 3
NFQA_PACKET_HDR, NFQA_VERDICT_HDR, NFQA_TIMESTAMP = 1, 2, 4
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN, NFQA_CFG_MASK, NFQA_CFG_FLAGS = 1, 2, 3, 4, 5
NFQNL_CFG_CMD_BIND, NFQNL_CFG_CMD_UNBIND = 1, 2
NFQNL_COPY_META = 1
NFQA_CFG_F_GSO = 4
NF_ACCEPT = 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
QUEUE_MAXLEN = 65536  # packets held at once: rate x delay; 1 Gbit/s of 1500-byte packets for 0.5 s
QUEUE = 27182  # the NFQUEUE the rule feeds: far from 0, which an IPS on a host may hold
NLA_HDR = struct.Struct("=HH")
NLMSG_HDR = struct.Struct("=IHHII")
NFGEN = struct.Struct("=BBH")  # family, version, res_id (big-endian queue number, packed by the caller)
STAMP = struct.Struct("!QQ")  # nfqnl_msg_packet_timestamp: seconds, microseconds of the wall clock
SO_TIMESTAMP = 29  # Linux's; the socket module does not always name it
STATUS_EVERY_S = 5.0
MAX_STAMP_AGE_S = 1.0  # a stamp older than this at its read is taken for a step of the wall clock


def input_rule(nic: str, queue: int = QUEUE) -> list[str]:
    """The iptables rule (chain onwards) that sends every packet arriving on ``nic`` to the queue; with
    ``--queue-bypass`` packets pass undelayed, never dropped, should no delayer listen (a host whose SSH runs
    on that NIC stays reachable)."""
    return ["INPUT", "-i", nic, "-j", "NFQUEUE", "--queue-num", str(queue), "--queue-bypass"]


def _attr(kind: int, payload: bytes) -> bytes:
    size = NLA_HDR.size + len(payload)
    return NLA_HDR.pack(size, kind) + payload + b"\0" * (-size % 4)


def message(msg: int, queue: int, attrs: bytes, flags: int = NLM_F_REQUEST, seq: int = 0) -> bytes:
    """One nfnetlink_queue message: netlink header, nfgenmsg (AF_UNSPEC, version 0, the queue), attributes."""
    body = NFGEN.pack(socket.AF_UNSPEC, 0, socket.htons(queue)) + attrs
    return NLMSG_HDR.pack(NLMSG_HDR.size + len(body), (NFNL_SUBSYS_QUEUE << 8) | msg, flags, seq, 0) + body


def config_messages(queue: int) -> list[bytes]:
    """Bind the queue, copy packets' metadata only, take GSO packets whole, allow ``QUEUE_MAXLEN`` queued."""
    return [
        message(NFQNL_MSG_CONFIG, queue, _attr(NFQA_CFG_CMD, struct.pack("=BxH", NFQNL_CFG_CMD_BIND, 0)),
                NLM_F_REQUEST | NLM_F_ACK, 1),
        message(NFQNL_MSG_CONFIG, queue, _attr(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META))
                + _attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", QUEUE_MAXLEN))
                + _attr(NFQA_CFG_MASK, struct.pack("!I", NFQA_CFG_F_GSO))
                + _attr(NFQA_CFG_FLAGS, struct.pack("!I", NFQA_CFG_F_GSO)), NLM_F_REQUEST | NLM_F_ACK, 2),
    ]


def verdict_batch(queue: int, packet_id: int) -> bytes:
    """ACCEPT every queued packet with an id up to ``packet_id``."""
    return message(NFQNL_MSG_VERDICT_BATCH, queue, _attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, packet_id)))


def packet_ids(data: bytes) -> tuple[list[tuple[int, float | None]], int]:
    """The packets of the queue messages in one datagram, each (id, the kernel's receive time in wall-clock
    seconds, or None where the message has none), and the errno of an error message (0: none)."""
    found: list[tuple[int, float | None]] = []
    offset = 0
    while offset + NLMSG_HDR.size <= len(data):
        length, kind, _, _, _ = NLMSG_HDR.unpack_from(data, offset)
        if length < NLMSG_HDR.size:
            break
        if kind == NLMSG_ERROR:
            (err,) = struct.unpack_from("=i", data, offset + NLMSG_HDR.size)
            if err:
                return found, -err
        elif kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            at = offset + NLMSG_HDR.size + NFGEN.size
            end = min(offset + length, len(data))
            pid: int | None = None
            stamp: float | None = None
            while at + NLA_HDR.size <= end:
                size, attr = NLA_HDR.unpack_from(data, at)
                if size < NLA_HDR.size:
                    break
                if attr & 0x3FFF == NFQA_PACKET_HDR and at + NLA_HDR.size + 4 <= end:
                    pid = struct.unpack_from("!I", data, at + NLA_HDR.size)[0]
                elif attr & 0x3FFF == NFQA_TIMESTAMP and at + NLA_HDR.size + STAMP.size <= end:
                    sec, usec = STAMP.unpack_from(data, at + NLA_HDR.size)
                    stamp = sec + usec / 1e6
                at += size + (-size % 4)
            if pid is not None:
                found.append((pid, stamp))
        offset += length + (-length % 4)
    return found, 0


def arrival(stamp: float | None, read_at: float, wall_minus_mono: float) -> float:
    """When a packet arrived, on the monotonic clock: the kernel's receive time where it has one up to
    ``MAX_STAMP_AGE_S`` before the read (no later than the read), else the time it was read (a stamp further off
    is a clock step, not a wait)."""
    if stamp is None:
        return read_at
    at = stamp - wall_minus_mono
    return min(at, read_at) if at >= read_at - MAX_STAMP_AGE_S else read_at


class Lateness:
    """How late beyond the delay packets were let through, summed since the start (the ``--status`` file)."""

    def __init__(self) -> None:
        self.packets = self.stamped = 0
        self.late_s = self.worst_s = 0.0

    def add(self, late_s: float) -> None:
        self.packets += 1
        self.late_s += late_s
        self.worst_s = max(self.worst_s, late_s)

    def as_dict(self, delay_us: int) -> dict[str, float | int]:
        mean = self.late_s / self.packets * 1e6 if self.packets else 0.0
        return {"delay_us": delay_us, "packets": self.packets, "stamped": self.stamped,
                "late_us_mean": round(mean, 1), "late_us_max": round(self.worst_s * 1e6, 1)}


def write_status(path: str, late: Lateness, delay_us: int) -> None:
    """Replace the status file in one rename, so a reader never sees half of it."""
    with open(path + ".tmp", "w") as f:
        json.dump(late.as_dict(delay_us), f)
    os.replace(path + ".tmp", path)


COMM = b"glmodel-delay"  # the process's name in /proc: a trial's context counts it as the network, not as load


def _prepare_process() -> socket.socket | None:
    """Name the process ``COMM``, ask for timer slack of 1 µs (Linux's default, 50 µs, would add itself to every
    short wait) and the highest priority allowed (nice -20 as root: a busy host's other processes then delay
    its wake-ups least), and return a socket that asks for timestamps: while one exists, the kernel stamps
    every packet it receives, and the queue passes the stamp on."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, ctypes.c_char_p(COMM), 0, 0, 0)  # PR_SET_NAME
        libc.prctl(29, 1000, 0, 0, 0)  # PR_SET_TIMERSLACK
    except (OSError, AttributeError):
        pass
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -20)
    except OSError:  # not root: the delay is then held from each packet's stamp alone
        pass
    try:
        stamps = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        stamps.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMP, 1)
        return stamps
    except OSError:  # held from when each packet is read, as without a stamp
        return None


def run(queue: int, delay: float, ready: str | None = None, status: str | None = None) -> int:
    stamps = _prepare_process()  # noqa: F841 - kept open: the kernel stamps packets while it exists
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    try:  # room for a burst of packet messages while the loop sleeps
        sock.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE (root)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind((0, 0))
    for msg in config_messages(queue):
        sock.send(msg)
        _, err = packet_ids(sock.recv(65536))
        if err:
            print(f"delayer: queue {queue}: the kernel refused its configuration ({os.strerror(err)})",
                  file=sys.stderr)
            return 1
    if ready:
        with open(ready, "w") as f:
            f.write(f"{os.getpid()}\n")
    stop = False

    def _stop(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    held: deque[tuple[float, int, float]] = deque()  # (due, id, arrived), due rising with id
    late = Lateness()
    delay_us = round(delay * 1e6)
    written = time.monotonic()
    sock.setblocking(False)
    while not stop:
        now = time.monotonic()
        timeout = max(0.0, held[0][0] - now) if held else 0.2
        # select's timeout has microseconds (poll's and epoll's are whole milliseconds, rounded up)
        if select.select([sock], [], [], timeout)[0]:
            while True:
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    break
                except OSError as e:  # ENOBUFS: messages were lost; the packets stay queued until verdicts
                    print(f"delayer: queue {queue}: {e}", file=sys.stderr)
                    break
                read_at = time.monotonic()
                offset = time.time() - read_at
                found, _ = packet_ids(data)
                for i, stamp in found:
                    at = arrival(stamp, read_at, offset)
                    late.stamped += stamp is not None
                    held.append((at + delay, i, at))
        now = time.monotonic()
        last = -1
        while held and held[0][0] <= now:
            _, last, at = held.popleft()
            late.add(now - at - delay)
        if last >= 0:
            sock.send(verdict_batch(queue, last))
        if status and now - written >= STATUS_EVERY_S:
            write_status(status, late, delay_us)
            written = now
    # release what is held before leaving (the iptables rule is removed before this process is stopped)
    if held:
        sock.send(verdict_batch(queue, held[-1][1]))
    if status:
        write_status(status, late, delay_us)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--queue", type=int, default=QUEUE, help="the NFQUEUE number the iptables rule sends packets to")
    ap.add_argument("--delay-us", type=int, required=True, help="how long each packet is held, microseconds")
    ap.add_argument("--ready", help="a file to write this process's id to once the queue is bound")
    ap.add_argument("--status", help="a file to keep how late beyond the delay packets were let through")
    args = ap.parse_args(argv)
    if not 0 <= args.queue <= 65535 or not 0 < args.delay_us <= 10_000_000:
        ap.error("--queue is 0-65535 and --delay-us 1-10000000")
    return run(args.queue, args.delay_us / 1e6, args.ready, args.status)


if __name__ == "__main__":
    sys.exit(main())
