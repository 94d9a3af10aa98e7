"""Pure builders and parsers for the gluster command line. Nothing here touches the network."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from ..errors import GlmodelError, ParseError

# glusterd's management port: every client reaches it on every server to mount a volume.
GLUSTERD_PORT = 24007


def gluster_argv(*args: str, socket: str | None = None, xml: bool = False) -> list[str]:
    """argv for one gluster CLI call. ``socket`` selects a glusterd by its UNIX socket (the local lab)."""
    argv = ["gluster", "--mode=script"]
    if socket:
        argv.append(f"--glusterd-sock={socket}")
    argv.extend(args)
    if xml:
        argv.append("--xml")
    return argv


@dataclass(frozen=True, order=True)
class GlusterVersion:
    major: int
    minor: int
    patch: int = 0

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}" + (f".{self.patch}" if self.patch else "")

    @property
    def has_stripe(self) -> bool:
        """The stripe translator was removed in GlusterFS 6."""
        return self.major < 6


_VERSION = re.compile(r"^glusterfs\s+(\d+)\.(\d+)(?:\.(\d+))?", re.MULTILINE)


def parse_version(text: str) -> GlusterVersion:
    """Parse ``gluster --version`` (or ``glusterfs --version``) output."""
    m = _VERSION.search(text)
    if not m:
        raise ParseError("gluster --version", f"no 'glusterfs X.Y' line in {text[:60]!r}")
    return GlusterVersion(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


@dataclass(frozen=True)
class Peer:
    uuid: str
    hostname: str
    hostnames: tuple[str, ...]
    connected: bool
    state: str


class GlusterCommandError(GlmodelError):
    """The gluster CLI answered with opRet != 0 in its XML."""


def parse_cli_xml(text: str, what: str) -> ET.Element:
    """Parse a ``--xml`` answer and raise with gluster's own error string when opRet is non-zero."""
    start = text.find("<?xml")
    if start < 0:
        start = text.find("<cliOutput")
    if start < 0:
        raise ParseError(what, f"no XML in output: {text.strip()[:120]!r}")
    try:
        root = ET.fromstring(text[start:])
    except ET.ParseError as exc:
        raise ParseError(what, f"malformed XML ({exc})") from None
    if root.tag != "cliOutput":
        raise ParseError(what, f"root element is <{root.tag}>, expected <cliOutput>")
    op_ret = root.findtext("opRet")
    if op_ret is None:
        raise ParseError(what, "missing <opRet>")
    if op_ret.strip() != "0":
        err = (root.findtext("opErrstr") or "").strip() or f"opRet {op_ret.strip()}"
        raise GlusterCommandError(f"{what}: {err}")
    return root


def parse_peer_status_xml(text: str) -> list[Peer]:
    """Peers of the answering node (itself excluded), from ``gluster peer status --xml``."""
    root = parse_cli_xml(text, "gluster peer status --xml")
    status = root.find("peerStatus")
    if status is None:
        raise ParseError("gluster peer status --xml", "missing <peerStatus>")
    peers = []
    for p in status.findall("peer"):
        hostname = (p.findtext("hostname") or "").strip()
        connected = (p.findtext("connected") or "").strip()
        if not hostname or connected not in ("0", "1"):
            raise ParseError("gluster peer status --xml", "a <peer> lacks <hostname> or <connected>")
        names = tuple(h.text.strip() for h in p.findall("hostnames/hostname") if h.text)
        peers.append(Peer((p.findtext("uuid") or "").strip(), hostname, names or (hostname,), connected == "1",
                          (p.findtext("stateStr") or "").strip()))
    return peers


_POOL_LINE = re.compile(r"^([0-9a-f-]{36})\s+(\S+)\s+(Connected|Disconnected)\s*$")


def parse_pool_list(text: str) -> list[Peer]:
    """Every node of the trusted pool (the answering one as 'localhost'), from ``gluster pool list``."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not lines[0].split()[:3] == ["UUID", "Hostname", "State"]:
        raise ParseError("gluster pool list", "missing the 'UUID Hostname State' header")
    peers = []
    for ln in lines[1:]:
        m = _POOL_LINE.match(ln.strip())
        if not m:
            raise ParseError("gluster pool list", f"unexpected line {ln.strip()!r}")
        peers.append(Peer(m.group(1), m.group(2), (m.group(2),), m.group(3) == "Connected", m.group(3)))
    return peers
