"""Brick backing per lab node: a loop device formatted ext4 or xfs, tmpfs, or the lab directory's own filesystem.

Every lab node's bricks live under one directory (``nodes/N/bricks``). By default that directory sits on the
machine's filesystem, so every node has the same disk and base filesystem. Here the directory becomes a mount
point instead:

- ``ext4`` / ``xfs``: a sparse image file in the node's directory, attached to a loop device with direct I/O
  (so reads and writes reach the real disk instead of a second page cache) and formatted with that filesystem;
- ``tmpfs``: memory, the fastest "disk" a node can have;
- ``dir``: no mount (the default).

The disk baseline (fio) measures what each backing gives; the label is never used as a figure. Commands are
built by pure functions; ``attach`` and ``detach`` are the places that run them.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import LabError
from ..hardware.settings import Backing
from .run import run

IMAGE = "bricks.img"
UMOUNT_TRIES = 40  # a quarter second apart: 10 s for a brick process to finish exiting
DEFAULT_SIZE = 4 << 30
_MIN_SIZE = {"xfs": 512 << 20, "ext4": 64 << 20, "tmpfs": 64 << 20, "dir": 0}  # mkfs.xfs refuses under 300 MB





def format_argv(kind: Backing, device: str) -> list[str]:
    """mkfs for a loop device. xfs gets 512-byte inodes, as Gluster's admin guide asks, for its xattrs."""
    if kind == "xfs":
        return ["mkfs.xfs", "-f", "-q", "-i", "size=512", device]
    if kind == "ext4":
        # No lazy init: the kernel would zero inode tables in the background and disturb the disk baseline.
        return ["mkfs.ext4", "-F", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", device]
    raise ValueError(f"{kind} is not formatted on a loop device")


def attach_argv(kind: Backing, image: str, mount_point: str, size: int, device: str | None = None) -> list[list[str]]:
    """The commands that back ``mount_point`` with ``kind`` (``device``: the loop device once it is known)."""
    if kind == "dir":
        return []
    if kind == "tmpfs":
        return [["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "glmodel-brick", mount_point]]
    if device is None:
        return [["truncate", "-s", str(size), image],
                ["losetup", "--find", "--show", "--direct-io=on", image]]
    return [format_argv(kind, device), ["mount", "-t", kind, "-o", "noatime", device, mount_point]]


def loop_devices(image: str) -> list[str]:
    """Loop devices attached to ``image`` (``losetup -j`` prints ``/dev/loop3: []: (/path)`` per device)."""
    out = run(["losetup", "-j", image], check=False).stdout
    return [line.split(":", 1)[0] for line in out.splitlines() if line.startswith("/dev/loop")]


def mounted(mount_point: str) -> str | None:
    """The filesystem type mounted exactly at ``mount_point`` (None if nothing is)."""
    proc = run(["findmnt", "-n", "-o", "FSTYPE", "--mountpoint", mount_point], check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def attach(kind: Backing, node_dir: Path, mount_point: Path, size: int = DEFAULT_SIZE) -> None:
    """Give ``mount_point`` (empty, unmounted) the backing ``kind``; undo what was done if a step fails."""
    if size < _MIN_SIZE[kind]:
        raise LabError(f"brick size {size} bytes is too small for {kind} (at least {_MIN_SIZE[kind] >> 20} MiB)")
    if kind == "dir":
        return
    image = str(node_dir / IMAGE)
    try:
        for argv in attach_argv(kind, image, str(mount_point), size):
            proc = run(argv, timeout=60)
        if kind in ("ext4", "xfs"):
            device = proc.stdout.strip()
            if not device.startswith("/dev/loop"):
                raise LabError(f"losetup gave {device!r} instead of a loop device for {image}")
            for argv in attach_argv(kind, image, str(mount_point), size, device):
                run(argv, timeout=120)
    except LabError:
        detach(node_dir, mount_point)
        raise


def detach(node_dir: Path, mount_point: Path) -> None:
    """Unmount the node's brick backing, detach its loop devices and delete its image (each may be gone)."""
    if mounted(str(mount_point)):
        # Busy while a brick process that was just ended is still exiting (seconds on a loaded machine): wait for
        # it, as a lazy unmount would keep the loop device attached, and its deleted image, until that process ends.
        for _ in range(UMOUNT_TRIES):
            if run(["umount", str(mount_point)], check=False, timeout=60).returncode == 0:
                break
            time.sleep(0.25)
        else:
            run(["umount", "-l", str(mount_point)], check=False)
    image = node_dir / IMAGE
    if image.exists():
        for device in loop_devices(str(image)):  # only devices backed by our own image file
            run(["losetup", "-d", device], check=False)
        image.unlink(missing_ok=True)
