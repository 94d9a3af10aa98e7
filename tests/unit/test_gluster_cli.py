"""gluster CLI argv builders and parsers, on output captured from the lab's GlusterFS 10.3."""

from __future__ import annotations

from pathlib import Path

import pytest

from gluster_model.errors import ParseError
from gluster_model.gluster.cli import (
    GlusterCommandError,
    GlusterVersion,
    gluster_argv,
    parse_peer_status_xml,
    parse_pool_list,
    parse_version,
)

G = Path(__file__).parent.parent / "data" / "gluster"


def test_argv_plain_and_with_socket() -> None:
    assert gluster_argv("peer", "status") == ["gluster", "--mode=script", "peer", "status"]
    assert gluster_argv("volume", "info", "v 1", socket="/run/g.sock", xml=True) == [
        "gluster", "--mode=script", "--glusterd-sock=/run/g.sock", "volume", "info", "v 1", "--xml"]


def test_version_from_lab() -> None:
    v = parse_version((G / "version_10.3.txt").read_text())
    assert v == GlusterVersion(10, 3) and str(v) == "10.3" and not v.has_stripe


@pytest.mark.parametrize("text,expected", [
    ("glusterfs 3.12.15\nRepository revision: git://git.gluster.org/glusterfs.git\n", GlusterVersion(3, 12, 15)),
    ("glusterfs 11.1\n", GlusterVersion(11, 1)),
    ("glusterfs 6.0\n", GlusterVersion(6, 0)),
])
def test_version_variants(text: str, expected: GlusterVersion) -> None:
    v = parse_version(text)
    assert v == expected
    assert v.has_stripe == (expected.major < 6)


@pytest.mark.parametrize("text", ["", "gluster: command not found", "glusterfs ten.three"])
def test_version_garbage(text: str) -> None:
    with pytest.raises(ParseError, match="gluster --version"):
        parse_version(text)


def test_peer_status_three_nodes() -> None:
    peers = parse_peer_status_xml((G / "peer_status_3nodes.xml").read_text())
    assert [p.hostname for p in peers] == ["127.1.1.2", "127.1.1.3"]
    assert all(p.connected and p.state == "Peer in Cluster" for p in peers)
    node2 = parse_peer_status_xml((G / "peer_status_3nodes_node2.xml").read_text())
    assert {p.hostname for p in node2} == {"127.1.1.1", "127.1.1.3"}


def test_peer_status_one_down_and_alone() -> None:
    peers = parse_peer_status_xml((G / "peer_status_one_down.xml").read_text())
    assert [(p.hostname, p.connected) for p in peers] == [("127.1.1.2", True), ("127.1.1.3", False)]
    assert parse_peer_status_xml((G / "peer_status_alone.xml").read_text()) == []


def test_peer_status_truncated_and_garbled() -> None:
    full = (G / "peer_status_3nodes.xml").read_text()
    with pytest.raises(ParseError, match="malformed XML"):
        parse_peer_status_xml(full[: len(full) // 2])
    with pytest.raises(ParseError, match="no XML"):
        parse_peer_status_xml((G / "no_glusterd.txt").read_text())
    with pytest.raises(ParseError, match="lacks <hostname> or <connected>"):
        parse_peer_status_xml(full.replace("<connected>1</connected>", "<connected>yes</connected>", 1))
    with pytest.raises(ParseError, match="missing <peerStatus>"):
        parse_peer_status_xml("<cliOutput><opRet>0</opRet></cliOutput>")


def test_cli_error_carries_glusters_message() -> None:
    text = "<cliOutput><opRet>-1</opRet><opErrno>30800</opErrno><opErrstr>Volume v9 does not exist</opErrstr></cliOutput>"
    with pytest.raises(GlusterCommandError, match="Volume v9 does not exist"):
        parse_peer_status_xml(text)


def test_pool_list() -> None:
    pool = parse_pool_list((G / "pool_list_3nodes.txt").read_text())
    assert [p.hostname for p in pool] == ["127.1.1.2", "127.1.1.3", "localhost"]
    down = parse_pool_list((G / "pool_list_one_down.txt").read_text())
    assert [p.connected for p in down] == [True, False, True]
    with pytest.raises(ParseError, match="header"):
        parse_pool_list("Connection failed. Please check if gluster daemon is operational.")
    with pytest.raises(ParseError, match="unexpected line"):
        parse_pool_list((G / "pool_list_3nodes.txt").read_text() + "garbage line here\n")
