"""Network latency: every packet a host's cluster NIC receives is held a fixed time before the host sees it, so a
round trip between two delayed hosts gains twice the delay.

A veth's round trip is tens of microseconds, a LAN's a few hundred, a stretched cluster's milliseconds; small
files and metadata are bound by them. The kernel's netem would add the delay on the NIC's queue, but not every
kernel has ``sch_netem`` (this lab's machine has not), so the delay is made in user space: an iptables rule
sends the packets arriving on the NIC to an NFQUEUE, and ``hardware.delayer`` (standard library only, its
source written beside the host's other glmodel files and run with the host's python3) lets each through after
the delay. The same commands serve a lab node (in its network namespace, its files in the node's directory,
``lab down`` ending the process with the node's others) and a cluster's host (over SSH, its files beside its
emulation record).

The delayer is started, and its queue bound, before the rule that feeds it exists, and the rule goes before the
delayer does: packets are never sent to a queue nobody reads (the rule's ``--queue-bypass`` lets them through
undelayed even then). A host whose packets already go to an NFQUEUE (its own IPS, or a delay glmodel did not
record) is refused: two readers of one queue would fight for its packets. The delayer's wake-ups add a little
of their own (50-80 us a packet under load, each held from its receive stamp; ``delayer``): the setting is what
was asked, the round trip measured (``bench.rtt``) is what the models read.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from .. import delayer
from ...processes import terminate_script
from ..knob import Argv, HostStep, Knob, KnobValue, whole

MAX_DELAY_US = 1_000_000  # a second each way: beyond any network a Gluster volume spans
# the knob's files on a host, after its files' prefix: the delayer's source, its process id, how late it let
# packets through (``delayer.write_status``)
SCRIPT, PIDFILE, STATUSFILE = "delayer.py", "delayer.pid", "delayer.status"


def parse_delay(text: str) -> int | None:
    """'0.5ms', '500us', '2ms' -> microseconds of delay added to each packet a node receives; 'none' or '0' ->
    None (no delay added)."""
    t = str(text).strip().lower().replace(" ", "")
    if t in ("none", "off", "0", "0ms", "0us"):
        return None
    for unit, scale in (("us", 1), ("µs", 1), ("ms", 1000), ("s", 1_000_000)):
        if t.endswith(unit):
            try:
                value = float(t[: -len(unit)]) * scale
            except ValueError:
                break
            if not 1 <= value <= MAX_DELAY_US or value != value:
                raise ValueError(f"{text!r}: a delay is 1us to 1s (or none)")
            return int(round(value))
    raise ValueError(f"{text!r} is not a delay (use e.g. 500us, 0.5ms, 2ms, or none)")


def show_delay(us: int | None) -> str:
    if us is None:
        return "none"
    return f"{us // 1000}ms" if us % 1000 == 0 else f"{us / 1000:g}ms" if us % 100 == 0 else f"{us}us"


def status_words(text: str) -> str:
    """A delayer's status file (``delayer.write_status``) in words: "held 1ms, 53 us late a packet on average
    over 100,362"; empty where the text is not one."""
    try:
        d = json.loads(text)
        delay, packets, late = int(d["delay_us"]), int(d["packets"]), float(d["late_us_mean"])
    except (ValueError, KeyError, TypeError):
        return ""
    return f"held {show_delay(delay)}, {late:.0f} us late a packet on average over {packets:,}"


def _read(nic: str) -> str:
    # what the host's INPUT chain sends to a queue already: "none", or the first such rule
    return ("r=$(iptables -S INPUT 2>/dev/null | grep -m1 -e '-j NFQUEUE'); "
            'if [ -n "$r" ]; then echo "queued: $r"; else echo none; fi')


def _stop(nic: str, files: str) -> Argv:
    """One command that takes away the delay this knob made (the rule first, then the delayer and its files);
    it finds nothing to do where there is none."""
    rule = shlex.join(delayer.input_rule(nic))
    s, p, st = (shlex.quote(files + f) for f in (SCRIPT, PIDFILE, STATUSFILE))
    # the delayer ends within its loop's 0.2 s wait after SIGTERM; wait for it (up to 5 s)
    end = terminate_script('"$pid"', kill=False)
    return ["sh", "-c", f"while iptables -D {rule} 2>/dev/null; do :; done; pid=$(cat {p} 2>/dev/null); "
                        f'if [ -n "$pid" ]; then {end}; fi; '
                        f"rm -f {p} {s} {st} {st}.tmp"]


def _apply(value: KnobValue, nic: str, files: str) -> list[Argv]:
    """Replace any delay of this knob's with ``value`` µs: the delayer's source written (root's alone), started
    detached, waited for until its queue is bound, then the rule that feeds it."""
    us = whole("latency", value)
    if us is None:
        return [_stop(nic, files)]
    s, p, st = (shlex.quote(files + f) for f in (SCRIPT, PIDFILE, STATUSFILE))
    source = Path(delayer.__file__).read_text()
    return [_stop(nic, files),
            ["sh", "-c", f"umask 077 && rm -f {p} && printf '%s' {shlex.quote(source)} > {s}"],
            ["sh", "-c", f"setsid nohup python3 {s} --queue {delayer.QUEUE} --delay-us {us} --ready {p} "
                         f"--status {st} </dev/null >/dev/null 2>&1 &"],
            ["sh", "-c", f"i=0; while [ ! -s {p} ]; do i=$((i+1)); if [ $i -gt 100 ]; then echo 'the packet "
                         f"delayer (python3) did not start' >&2; exit 1; fi; sleep 0.1; done"],
            ["iptables", "-A", *delayer.input_rule(nic)],
            # a delayer that ended after binding its queue would leave the rule passing packets undelayed
            # (--queue-bypass): the setting would be measured without its delay
            ["sh", "-c", f"sleep 0.3; kill -0 \"$(cat {p})\" 2>/dev/null || {{ echo 'the packet delayer "
                         f"(python3) ended after it started: packets would pass undelayed' >&2; exit 1; }}"]]


def _restore(was: str, nic: str, files: str) -> list[Argv]:
    if was.strip() != "none":
        raise ValueError(f"packets arriving on {nic} already go to an NFQUEUE ({was.strip()[8:88]}); glmodel "
                         "does not add a delay of its own there: remove the latency factor for this cluster, or "
                         "take that rule away first")
    return [_stop(nic, files)]


def _say(value: KnobValue, nic: str) -> str:
    return f"packets received on {nic} held {show_delay(whole('latency', value))}"


KNOB = Knob("latency", "Delay added to every packet a node receives (a round trip gains twice it): 250us, 1ms, none.",
            parse_delay, show_delay, moves=("network_rtt_ms",), emulated=True, shares=False,
            baselines=("network",), step=HostStep(_read, _apply, _restore, say=_say))
