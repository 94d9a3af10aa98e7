"""Control groups for lab nodes: find the controllers, create a node's group, move its processes, remove groups.

A node's RAM and CPU (and, on cgroup v2, its disk) are limits on a control group holding every process of that
node: every process in its network namespace (its glusterd and bricks, and its sshd, so everything glmodel
starts through it, the FUSE client, iozone, dd, is born inside). Groups are made at the root of each hierarchy
under ``glmodel-lab-<id>/node<N>`` (on v2 a group with processes cannot hand controllers down, so nesting under
the caller's group would not work). Each directory is recorded in the lab's state before it is made;
``remove`` takes exactly those away again.
"""

from __future__ import annotations

import errno
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import LabError
from . import netns
from .run import all_pids, descendants, names, read_knob, write_knob
from .state import LabState, NodeState

Controller = Literal["memory", "cpu", "io"]
_V1_NAMES = {"memory": "memory", "cpu": "cpu", "io": "blkio"}


@dataclass(frozen=True)
class Hierarchy:
    """Where one controller lives on this host: cgroup v1 (its own mount) or v2 (the unified tree)."""

    version: Literal[1, 2]
    root: Path


def parse_mounts(mounts: str) -> dict[str, Path]:
    """{v1 controller or "unified": mount point} from /proc/self/mounts text (pure)."""
    out: dict[str, Path] = {}
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        target, fstype, options = parts[1].replace("\\040", " "), parts[2], parts[3].split(",")
        if fstype == "cgroup2":
            out.setdefault("unified", Path(target))
        elif fstype == "cgroup":
            for opt in options:
                if opt in ("memory", "cpu", "blkio"):
                    out.setdefault(opt, Path(target))
    return out


def hierarchy(controller: Controller, mounts: str | None = None) -> Hierarchy:
    """Where ``controller`` is on this host; a LabError naming the missing controller when it is nowhere.

    A v1 mount of the controller wins; otherwise the unified (v2) tree must list it in cgroup.controllers.
    """
    text = mounts if mounts is not None else (read_knob(Path("/proc/self/mounts")) or "")
    found = parse_mounts(text)
    v1 = _V1_NAMES[controller]
    if v1 in found:
        return Hierarchy(1, found[v1])
    unified = found.get("unified")
    if unified is not None:
        available = (read_knob(unified / "cgroup.controllers") or "").split()
        if controller in available:
            return Hierarchy(2, unified)
    raise LabError(f"this host has no `{controller}` cgroup controller (no cgroup v1 `{v1}` hierarchy, and cgroup v2 "
                   f"does not offer `{controller}`); the lab needs it for this setting")


def lab_group_name(lab_dir: str) -> str:
    """A name unique to one lab directory, so two labs on one machine never share groups."""
    return "glmodel-lab-" + hashlib.sha256(lab_dir.encode()).hexdigest()[:10]


def node_group(state: LabState, node: NodeState, where: Hierarchy) -> Path:
    return where.root / lab_group_name(state.dir) / f"node{node.index}"


def exists(state: LabState, node: NodeState, controller: Controller) -> bool:
    """Whether the lab made the node's group for ``controller`` (a host without the controller has none)."""
    try:
        return str(node_group(state, node, hierarchy(controller))) in state.cgroups
    except LabError:
        return False


def ensure(state: LabState, node: NodeState, controller: Controller) -> tuple[Path, Hierarchy]:
    """The node's group for ``controller``, made (and the node's processes moved in) if it is not there yet."""
    where = hierarchy(controller)
    group = node_group(state, node, where)
    if group.is_dir():
        if str(group) not in state.cgroups:  # made by this lab before a crash between mkdir and save
            state.cgroups.append(str(group))
            state.save()
        return group, where
    if where.version == 2:
        _enable_v2(where.root, controller)
    for path in (group.parent, group):
        if not path.is_dir():
            if str(path) not in state.cgroups:
                state.cgroups.append(str(path))
                state.save()  # recorded before it is made
            try:
                path.mkdir()
            except OSError as exc:
                raise LabError(f"cannot create the cgroup {path}: {exc.strerror}") from None
            if where.version == 2 and path == group.parent:
                write_knob(path / "cgroup.subtree_control", f"+{controller}")
    move(node_pids(node), group)
    return group, where


def _enable_v2(root: Path, controller: Controller) -> None:
    enabled = (read_knob(root / "cgroup.subtree_control") or "").split()
    if controller not in enabled:
        raise LabError(f"cgroup v2 at {root} does not hand the `{controller}` controller to its children; enable it "
                       f"with `echo +{controller} > {root}/cgroup.subtree_control`")


def node_pids(node: NodeState) -> list[int]:
    """Every process of one node: those in its network namespace (glusterd, bricks, sshd and whatever its SSH
    sessions started), those naming its directory (a FUSE client mounted from the machine), and their
    descendants."""
    own = netns.pids(node.netns) + [pid for pid in all_pids() if names(pid, node.marker)]
    found = set(own)
    for pid in own:
        found.update(descendants(pid))
    return sorted(found)


def move(pids: list[int], group: Path) -> None:
    """Move processes into ``group`` (those that ended meanwhile are skipped)."""
    for pid in pids:
        try:
            with open(group / "cgroup.procs", "w") as f:
                f.write(str(pid))
        except ProcessLookupError:
            continue
        except OSError as exc:
            if exc.errno == errno.ESRCH:
                continue
            raise LabError(f"cannot move process {pid} into the cgroup {group}: {exc.strerror}") from None


def members(group: Path) -> list[int]:
    text = read_knob(group / "cgroup.procs") or ""
    return [int(p) for p in text.split() if p.isdecimal()]


def remove(paths: list[str], timeout: float = 10.0) -> list[str]:
    """Remove the recorded cgroup directories, children first; processes still inside go to the parent first.

    Returns the paths that could not be removed (each still named in the state, to be tried again)."""
    left: list[str] = []
    for raw in sorted(paths, key=lambda p: p.count("/"), reverse=True):
        path = Path(raw)
        if not path.is_dir():
            continue
        deadline = time.monotonic() + timeout
        while True:
            move(members(path), path.parent)
            try:
                path.rmdir()
                break
            except OSError as exc:
                # EBUSY: a process was still leaving, or a dying one still held memory pages; try again.
                if time.monotonic() > deadline:
                    left.append(f"{raw} ({exc.strerror})")
                    break
                time.sleep(0.1)
    return left
