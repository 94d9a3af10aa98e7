"""Hardware as a knob: each resource's commands (pure builders and parsers), and emulation on any cluster.

- ``link``: tc shaping of a NIC (rate both ways; ingress through IFB), the lab's and a real host's alike;
- ``disk``: block throttling of the device under a brick (blkio entries, the device found through partitions,
  LVM/device-mapper and md), and the probe that measures it first;
- ``group``: a host's group (cgroup) holding its Gluster processes and what glmodel runs there: RAM and CPU
  (the limit files and their texts for cgroup v1 and v2, a lab node's group's too);
- ``nic``: which NIC carries a host's cluster address, and its speed;
- ``limits``: a host's effective RAM and CPU limits and its CPU score, as host facts;
- ``emulation``: a plan's hardware setting applied on a cluster that allows it, recorded on each host and undone.

The lab applies the same builders to its own nodes (``lab/links.py``, ``lab/disk.py``, ``lab/ram.py``,
``lab/cpu.py``), inside their namespaces and its own state.
"""
