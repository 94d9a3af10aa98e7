"""Network speed per lab node: its NIC (``eth0`` in its namespace) shaped with tc, as any host's would be.

The reference study found the network decisive, and on one machine a node's NIC (a veth on the lab's bridge,
see ``netns``) runs at memory speed. The commands are ``hardware.link``'s, the ones ``hardware.emulation`` runs on a real
host; the lab runs them inside the node's namespace, where the IFB device is the node's own.
"""

from __future__ import annotations

from ..errors import LabError
from ..hardware.link import removal_argv, shaping_argv
from .netns import NIC, in_netns
from .run import run


def install(netns: str, rate: int | None) -> None:
    """Give the NIC of the node in ``netns`` the rate (None: no shaping), replacing what it had."""
    remove(netns)
    if rate is None:
        return
    try:
        for argv in shaping_argv(NIC, rate):
            run(in_netns(netns, argv))
    except LabError:
        remove(netns)
        raise


def remove(netns: str) -> None:
    """Remove the shaping of the node's NIC (the namespace's deletion removes it too)."""
    for argv in removal_argv(NIC):
        run(in_netns(netns, argv), check=False)
