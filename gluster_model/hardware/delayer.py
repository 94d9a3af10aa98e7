"""Hold every packet a node receives for a fixed time, then let it through: network latency without netem.

Where the kernel has no ``sch_netem`` (this lab's has neither it nor ``sch_fq``), a round trip can still be
made longer in user space: an iptables rule sends each packet arriving on the NIC to an NFQUEUE, and this
process gives each one its ACCEPT verdict ``delay`` after it arrived. Only the packets' metadata cross into
user space (copy mode META; GSO packets whole), so a Python loop keeps up with a shaped 1 Gbit/s link.

Why on receive (iptables INPUT) and not on send: a packet held on the sending side is still charged to its
socket, and TCP's small-queue limit then stalls the sender at a few packets in flight, capping throughput at
a few hundred KB per delay; a received packet is no longer any socket's. Delaying every node's received
packets by d makes every round trip between two nodes 2·d longer.

Standard library only, so the same file runs on a cluster's host (``python3 delayer.py``). Speaks the
nfnetlink_queue protocol directly (linux/netfilter/nfnetlink_queue.h): bind a queue, set copy mode and flags,
read packet ids, answer with batch verdicts (a queue with one fixed delay releases packets in arrival order,
and ids rise with arrival, so one verdict releases every packet that is due).

    python3 -m gluster_model.hardware.delayer --delay-us 500 [--queue N] [--ready FILE]
"""

from __future__ import annotations

import argparse
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
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
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


def packet_ids(data: bytes) -> tuple[list[int], int]:
    """The packet ids of the queue messages in one datagram, and the errno of an error message (0: none)."""
    ids: list[int] = []
    offset = 0
    while offset + NLMSG_HDR.size <= len(data):
        length, kind, _, _, _ = NLMSG_HDR.unpack_from(data, offset)
        if length < NLMSG_HDR.size:
            break
        if kind == NLMSG_ERROR:
            (err,) = struct.unpack_from("=i", data, offset + NLMSG_HDR.size)
            if err:
                return ids, -err
        elif kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            at = offset + NLMSG_HDR.size + NFGEN.size
            end = offset + length
            while at + NLA_HDR.size <= end:
                size, attr = NLA_HDR.unpack_from(data, at)
                if size < NLA_HDR.size:
                    break
                if attr & 0x3FFF == NFQA_PACKET_HDR:
                    ids.append(struct.unpack_from("!I", data, at + NLA_HDR.size)[0])
                    break
                at += size + (-size % 4)
        offset += length + (-length % 4)
    return ids, 0


COMM = b"glmodel-delay"  # the process's name in /proc: a trial's context counts it as the network, not as load


def _prepare_process() -> None:
    """Name the process ``COMM`` and ask for timer slack of 1 µs (Linux's default, 50 µs, would add itself to
    every short wait)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, ctypes.c_char_p(COMM), 0, 0, 0)  # PR_SET_NAME
        libc.prctl(29, 1000, 0, 0, 0)  # PR_SET_TIMERSLACK
    except (OSError, AttributeError):
        pass


def run(queue: int, delay: float, ready: str | None = None) -> int:
    _prepare_process()
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
    held: deque[tuple[float, int]] = deque()  # (due, id), due rising with id
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
                arrived = time.monotonic()
                ids, _ = packet_ids(data)
                held.extend((arrived + delay, i) for i in ids)
        now = time.monotonic()
        last = -1
        while held and held[0][0] <= now:
            last = held.popleft()[1]
        if last >= 0:
            sock.send(verdict_batch(queue, last))
    # release what is held before leaving (the iptables rule is removed before this process is stopped)
    if held:
        sock.send(verdict_batch(queue, held[-1][1]))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--queue", type=int, default=QUEUE, help="the NFQUEUE number the iptables rule sends packets to")
    ap.add_argument("--delay-us", type=int, required=True, help="how long each packet is held, microseconds")
    ap.add_argument("--ready", help="a file to write this process's id to once the queue is bound")
    args = ap.parse_args(argv)
    if not 0 <= args.queue <= 65535 or not 0 < args.delay_us <= 10_000_000:
        ap.error("--queue is 0-65535 and --delay-us 1-10000000")
    return run(args.queue, args.delay_us / 1e6, args.ready)


if __name__ == "__main__":
    sys.exit(main())
