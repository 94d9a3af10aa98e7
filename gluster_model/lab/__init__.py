"""The local lab: N real GlusterFS nodes on one machine, each a small machine with a network namespace and NIC.

Data flows one way through the package; no module imports one that imports it:

- ``run``: the one way to run a local command, write a kernel setting and find processes;
- ``state``: what the lab is made of (``state.json``), written before anything is added to the machine;
- ``netns``: each node's network namespace and NIC on the lab's bridge;
- ``links`` (tc on a node's NIC), ``bricks`` (loop devices), ``disk`` (block throttling), ``ram`` and ``cpu``
  (control groups, via ``cgroups``): one module per kind of hardware;
- ``hardware``: ``set_hardware`` applies a node's settings through those modules; ``remove_all`` undoes them;
- ``clusterfile``: the lab's ``lab.yaml``, an ordinary cluster file;
- ``lifecycle``: ``lab_up``, ``lab_down``, ``lab_status`` and the daemons of each node.
"""

from ..gluster.cli import GLUSTERD_PORT
from ..hardware.settings import KNOBS, PAIRS, parse_setting
from .hardware import node_settings, restore, set_backing, set_hardware, set_links, snapshot
from .lifecycle import (DEFAULT_SSH_PORT, NodeStatus, lab_down, lab_mounts, lab_pids, lab_status, lab_up,
                        start_glusterd, start_sshd, stop_sshd)
from .state import LabState, NodeState, find_node, load_lab

__all__ = ["DEFAULT_SSH_PORT", "GLUSTERD_PORT", "KNOBS", "PAIRS", "LabState", "NodeState", "NodeStatus", "find_node",
           "lab_down", "lab_mounts", "lab_pids", "lab_status", "lab_up", "load_lab", "node_settings", "parse_setting",
           "restore", "set_backing", "set_hardware", "set_links", "snapshot", "start_glusterd", "start_sshd",
           "stop_sshd"]
