"""What a host is, as ``preflight`` finds it at the start of a campaign: one typed record per host.

The store keeps each record as JSON beside the host's row (``Store.put_hosts``), the hardware key is computed
from it (``campaign.records.hardware_key``), the dataset reads its CPU score, RAM and brick filesystems, and the
report lists it. Every field may be missing (an older glmodel's record, a host that is only a client); a
tool's version is a field of its own, ``<tool>_version``, kept as the record's extra fields, so a new engine's
tool needs no change here. A record written by any release reads back unchanged (``model_dump`` gives the same
JSON it was made from).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class BrickFacts(BaseModel):
    """One brick path of a server: the free space and filesystem under it, and any block throttle of its device
    (limit key such as ``read_bps`` -> value) the host had before glmodel changed anything."""

    model_config = ConfigDict(extra="allow", frozen=True)

    free_bytes: int | None = None
    fstype: str | None = None
    throttle: dict[str, int] | None = None


class HostFacts(BaseModel):
    """One host's facts: who it is in the cluster, its CPU, RAM, NIC, kernel and software, its bricks, the
    limits it already runs under, and what glmodel measured of it (CPU score, clock offset)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str | None = None
    roles: list[str] = Field(default_factory=list)
    kernel: str | None = None
    os: str | None = None
    boot_id: str | None = None  # hosts that show one share a machine (and its cores)
    cpu_model: str | None = None
    cpus: int | None = None
    cpu_quota_cores: int | float | None = None  # the tightest CPU quota over the host's groups; None: none
    cpu_score: int | float | None = None  # MB/s of SHA-256 by one process (preflight.cpu_score)
    mem_total_bytes: int | None = None
    ram_bytes: int | None = None           # what the page cache can hold: the RAM, or the tighter limit
    ram_limit_bytes: int | None = None
    nic: str | None = None
    nic_speed_mbps: int | None = None
    nic_mtu: int | None = None
    gluster_version: str | None = None
    bricks: dict[str, BrickFacts] | None = None
    emulated_changes: int | None = None
    clock_offset_s: float | None = None
    clock_uncertainty_s: float | None = None

    @classmethod
    def read(cls, record: object) -> HostFacts:
        """The facts of a stored record (a JSON object; anything else, such as a missing record, is none)."""
        return cls.model_validate(record if isinstance(record, dict) else {})

    def record(self) -> dict[str, Any]:
        """The JSON object the store keeps: the fields that were given, as they were given."""
        return self.model_dump(mode="json", exclude_unset=True)

    def version(self, tool: str) -> str | None:
        """The version line of ``tool`` (iperf3, fio, iozone, ...) the host printed; None: not found or not asked."""
        value = (self.model_extra or {}).get(f"{tool}_version")
        return None if value is None else str(value)

    @property
    def brick_fstypes(self) -> list[str | None]:
        return [b.fstype for b in (self.bricks or {}).values()]
