"""Cluster file: YAML (or an Ansible inventory) -> a validated, frozen ClusterSpec.

Everything a remote command will contain is checked here, before any connection is made: host names,
brick paths and user names must match strict patterns, so the command builders can rely on them.
"""

from __future__ import annotations

import getpass
import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import ConfigError
from .yamlio import parse_yaml, read_text, validation_message
from .inventory import in_inventory_terms, inventory_to_cluster_data, is_yaml_inventory, looks_like_inventory

_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_REMOTE_PATH = re.compile(r"^/[A-Za-z0-9._+@%=/-]*$")
_USER = re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$")
_SCOPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$")
# Display names become parts of remote paths (per-client work directories) and of file names.
DISPLAY_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


def check_host(value: str) -> str:
    """Accept an IPv4/IPv6 address or an RFC 1123 host name; anything else could smuggle shell syntax."""
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        pass
    else:
        # An IPv6 scope ID is free text to the parser ("fe80::1%$(cmd)"); only an interface name is one.
        scope = getattr(address, "scope_id", None)
        if scope is not None and not _SCOPE.match(scope):
            raise ValueError(f"'{value}': the scope ID after '%' must be an interface name (letters, digits, "
                             f"'.', '_', '-')")
        return str(address)
    if not _HOSTNAME.match(value):
        raise ValueError(f"'{value}' is not a host name or IP address (letters, digits, '-' and '.')")
    return value


def check_remote_path(value: str) -> str:
    """Absolute path with a conservative character set (Gluster splits brick specs on ':', shells on spaces)."""
    if not _REMOTE_PATH.match(value):
        raise ValueError(
            f"'{value}' must be an absolute path of letters, digits and . _ + @ % = / - (no spaces or ':')"
        )
    if any(part == ".." for part in value.split("/")):
        raise ValueError(f"'{value}' must not contain '..'")
    return value.rstrip("/") or "/"


def check_brick_list(v: list[str]) -> list[str]:
    if not v:
        raise ValueError("must list at least one brick path (or be left out to use defaults)")
    cleaned = [check_remote_path(p) for p in v]
    if len(set(cleaned)) != len(cleaned):
        raise ValueError("lists the same brick path twice")
    return cleaned

Filesystem = Literal["ext4", "xfs", "btrfs", "zfs", "tmpfs", "other"]


def check_user(value: str) -> str:
    if not _USER.match(value):
        raise ValueError(f"'{value}' is not a valid user name")
    return value


RemotePath = Annotated[str, AfterValidator(check_remote_path)]
BrickList = Annotated[list[str], AfterValidator(check_brick_list)]
UserName = Annotated[str, AfterValidator(check_user)]


class Frozen(BaseModel):
    """Base for every input model: unknown keys are errors and nothing changes after validation."""

    # validate_default: defaults go through the same normalising validators as given values.
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


class NetworkLabel(Frozen):
    """Nominal network, a label for reports; the model uses the speed iperf3 measures."""

    name: str = Field(min_length=1, max_length=64)
    gbps: float = Field(gt=0, le=10_000, description="nominal link speed in Gbit/s")


class HardwareLabels(Frozen):
    network: NetworkLabel | None = None
    base_filesystem: Filesystem | None = None
    disk: str | None = Field(default=None, max_length=64, description="disk model or class, e.g. 'sata-ssd'")
    price: float | None = Field(default=None, ge=0, description="price of this host, for cost comparisons")


class SSHOverride(Frozen):
    """Per-host SSH settings; any key left out falls back to the cluster-wide ``ssh`` section."""

    user: UserName | None = None
    port: int | None = Field(default=None, ge=1, le=65535)
    identity_file: Path | None = None


class SSHSettings(Frozen):
    user: UserName = Field(default_factory=getpass.getuser, validate_default=True)
    port: int = Field(default=22, ge=1, le=65535)
    identity_file: Path | None = None
    known_hosts: Path = Path("~/.ssh/known_hosts")
    # Only "reject" exists: an unknown or changed key is refused. Keys are recorded with `glmodel trust`,
    # which shows the fingerprint first; there is deliberately no auto-accept policy.
    host_key_policy: Literal["reject"] = "reject"
    connect_timeout: float = Field(default=10.0, gt=0, le=600)
    command_timeout: float = Field(default=3600.0, gt=0, le=7 * 24 * 3600)
    max_parallel: int = Field(default=16, ge=1, le=256)


class HostEntry(Frozen):
    host: str
    name: str | None = Field(default=None, pattern=DISPLAY_NAME,
                             description="display name (letters, digits, . _ -); defaults to host")
    ssh: SSHOverride | None = None
    brick_paths: BrickList | None = None
    mount_root: RemotePath | None = None
    local_dir: RemotePath | None = Field(default=None, description="a directory on this client's own filesystem "
                                         "(local reads of the read-cost study)")
    glusterd_socket: RemotePath | None = None
    hardware: HardwareLabels | None = None
    source_address: str | None = Field(
        default=None, description="IPv4 address this client's FUSE mount connects from (the storage NIC of a "
                                  "multi-homed client; the lab's node address)")

    @field_validator("host")
    @classmethod
    def _host(cls, v: str) -> str:
        return check_host(v)

    @field_validator("source_address")
    @classmethod
    def _source(cls, v: str | None) -> str | None:
        if v is None:
            return v
        try:
            return str(ipaddress.IPv4Address(v))  # GlusterFS 10 honours a source address for IPv4 only
        except ValueError:
            raise ValueError(f"'{v}' is not an IPv4 address") from None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        # "- 10.0.0.5" is shorthand for "- host: 10.0.0.5".
        return {"host": data} if isinstance(data, str) else data


class HostDefaults(Frozen):
    """Values every host gets unless its own entry says otherwise."""

    brick_paths: BrickList | None = None
    mount_root: RemotePath = "/mnt/glmodel"
    local_dir: RemotePath = "/var/tmp/glmodel"
    glusterd_socket: RemotePath | None = None


class LabRef(Frozen):
    """Present when the cluster is a glmodel local lab; lets commands find the lab's state."""

    state_dir: Path


class EmulationSettings(Frozen):
    """Whether glmodel may make this cluster's hardware slower for a plan (off unless the file says so)."""

    allow: bool = Field(default=False, description="let plans with hardware factors (link, disk) shape these hosts' NICs and throttle their brick disks")
    record_dir: RemotePath = Field(default="/var/lib/glmodel", description=(
        "directory on each host where glmodel records what it changed, so `glmodel restore` can undo it"))


class ClusterFile(Frozen):
    """The YAML cluster file exactly as written."""

    name: str = Field(default="cluster", pattern=DISPLAY_NAME)
    ssh: SSHSettings = SSHSettings()
    defaults: HostDefaults = HostDefaults()
    hardware: HardwareLabels = HardwareLabels()
    servers: list[HostEntry] = Field(min_length=1)
    clients: list[HostEntry] | None = None
    lab: LabRef | None = None
    emulation: EmulationSettings = EmulationSettings()

    @field_validator("servers", "clients")
    @classmethod
    def _unique(cls, v: list[HostEntry] | None) -> list[HostEntry] | None:
        if v is None:
            return v
        seen: set[str] = set()
        for i, entry in enumerate(v):
            if entry.host in seen:
                raise ValueError(f"host '{entry.host}' is listed twice (entry {i}); list each host once per role")
            seen.add(entry.host)
        return v

    @model_validator(mode="after")
    def _servers_have_bricks(self) -> ClusterFile:
        for i, s in enumerate(self.servers):
            if s.brick_paths is None and self.defaults.brick_paths is None:
                raise ValueError(
                    f"servers[{i}] ({s.host}) has no brick_paths and defaults.brick_paths is not set"
                )
        return self


@dataclass(frozen=True)
class SSHTarget:
    """Resolved SSH settings for one host."""

    user: str
    port: int
    identity_file: Path | None
    known_hosts: Path
    connect_timeout: float
    command_timeout: float


@dataclass(frozen=True)
class Host:
    """One machine of the cluster with every default and override applied."""

    address: str
    name: str
    roles: frozenset[str]
    ssh: SSHTarget
    brick_paths: tuple[str, ...]
    mount_root: str
    glusterd_socket: str | None
    hardware: HardwareLabels
    source_address: str | None = None
    local_dir: str = "/var/tmp/glmodel"

    @property
    def is_server(self) -> bool:
        return "server" in self.roles

    @property
    def is_client(self) -> bool:
        return "client" in self.roles


@dataclass(frozen=True)
class ClusterSpec:
    """A validated cluster: hosts in file order (servers first), plus where it came from."""

    name: str
    source: str
    hosts: tuple[Host, ...]
    max_parallel: int
    lab_dir: Path | None
    raw: ClusterFile

    @property
    def emulation(self) -> EmulationSettings:
        return self.raw.emulation

    def emulation_file(self, address: str, kind: str) -> str:
        """Where a host keeps one of glmodel's emulation files: ``undo`` (the record), ``join`` (what moves a
        command into the host's group), ``origins`` (where moved processes came from). One set per address:
        a lab's nodes share a disk."""
        return f"{self.emulation.record_dir.rstrip('/')}/emulation-{address}.{kind}"

    def join_file(self, address: str) -> str | None:
        """The host's join file while this cluster allows emulation (None: glmodel never emulates here)."""
        return self.emulation_file(address, "join") if self.emulation.allow and self.lab_dir is None else None

    @property
    def servers(self) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if h.is_server)

    @property
    def clients(self) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if h.is_client)

    def host(self, address: str) -> Host:
        for h in self.hosts:
            if h.address == address or h.name == address:
                return h
        raise ConfigError(self.source, "host", f"'{address}' is not in this cluster file")


def _resolve_local(path: Path | None, base: Path) -> Path | None:
    if path is None:
        return None
    path = path.expanduser()
    return path if path.is_absolute() else (base / path)


def resolve(cf: ClusterFile, source: str, base: Path, *, connecting: bool = True) -> ClusterSpec:
    """Merge defaults and overrides into concrete hosts; check local files the SSH layer will need."""
    # A host listed as both server and client is one machine: its two entries are merged, and a key
    # given in both with different values is refused rather than silently picking one.
    entries: dict[str, tuple[HostEntry, set[str], str]] = {}
    groups = (("server", cf.servers), ("client", cf.servers if cf.clients is None else cf.clients))
    for role, group in groups:
        for i, e in enumerate(group):
            key = f"{role}s[{i}]"
            if e.host not in entries:
                entries[e.host] = (e, {role}, key)
                continue
            first, roles, first_key = entries[e.host]
            a, b = first.model_dump(exclude_none=True), e.model_dump(exclude_none=True)
            clash = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
            if clash:
                raise ConfigError(
                    source, f"{key}.{clash[0]}",
                    f"host '{e.host}' is also {first_key} with a different {clash[0]}; give it in one place",
                )
            entries[e.host] = (HostEntry.model_validate({**a, **b}), roles | {role}, first_key)

    hosts: list[Host] = []
    for address, (e, roles, key) in entries.items():
        ov = e.ssh or SSHOverride()
        identity = _resolve_local(ov.identity_file or cf.ssh.identity_file, base)
        if connecting and identity is not None and not identity.is_file():  # a dry run connects nowhere
            field = f"{key}.ssh.identity_file" if ov.identity_file else "ssh.identity_file"
            raise ConfigError(source, field, f"identity file {identity} does not exist")
        known = _resolve_local(cf.ssh.known_hosts, base)
        assert known is not None
        target = SSHTarget(
            user=ov.user or cf.ssh.user,
            port=ov.port or cf.ssh.port,
            identity_file=identity,
            known_hosts=known,
            connect_timeout=cf.ssh.connect_timeout,
            command_timeout=cf.ssh.command_timeout,
        )
        own = e.hardware.model_dump(exclude_none=True) if e.hardware else {}
        hw = HardwareLabels.model_validate({**cf.hardware.model_dump(exclude_none=True), **own})
        hosts.append(
            Host(
                address=address,
                name=e.name or address,
                roles=frozenset(roles),
                ssh=target,
                brick_paths=tuple(e.brick_paths or cf.defaults.brick_paths or ()) if "server" in roles else (),
                mount_root=e.mount_root or cf.defaults.mount_root,
                glusterd_socket=e.glusterd_socket or cf.defaults.glusterd_socket,
                hardware=hw,
                source_address=e.source_address,
                local_dir=e.local_dir or cf.defaults.local_dir,
            )
        )
    names = [h.name for h in hosts]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise ConfigError(source, "name", f"display name '{dup}' is used by two hosts")
    return ClusterSpec(
        name=cf.name,
        source=source,
        hosts=tuple(hosts),
        max_parallel=cf.ssh.max_parallel,
        lab_dir=_resolve_local(cf.lab.state_dir, base) if cf.lab else None,
        raw=cf,
    )


MAX_HOSTS = 4096  # refused before validation, which would take minutes for hundreds of thousands


def cluster_from_data(data: Any, source: str, base: Path, *, connecting: bool = True) -> ClusterSpec:
    """Validate already-parsed data (a cluster mapping) and resolve it; without ``connecting`` (a dry run) an
    identity file need not exist yet."""
    if not isinstance(data, dict):
        raise ConfigError(source, "", "expected a mapping with at least a 'servers' key")
    for key in ("servers", "clients"):
        entries = data.get(key)
        if isinstance(entries, list) and len(entries) > MAX_HOSTS:
            raise ConfigError(source, key, f"{len(entries):,} entries; a cluster file holds at most {MAX_HOSTS:,} "
                              "of each")
    try:
        cf = ClusterFile.model_validate(data)
    except ValidationError as exc:
        raise validation_message(exc, source, ClusterFile) from None
    return resolve(cf, source, base, connecting=connecting)


def load_cluster(path: str | Path, *, connecting: bool = True) -> ClusterSpec:
    """Load a cluster file, or an Ansible inventory (INI or YAML) with server and client groups; without
    ``connecting`` (a dry run, which connects nowhere) the SSH identity file need not exist."""
    p = Path(path)
    text = read_text(p)
    source = str(p)
    kind = looks_like_inventory(p, text)
    places: dict[str, list[str]] = {}
    if kind == "ini":
        data = inventory_to_cluster_data(text, source, fmt="ini", places=places)
    else:
        data = parse_yaml(text, source)
        if kind == "yaml" or is_yaml_inventory(data):
            data = inventory_to_cluster_data(data, source, fmt="yaml", places=places)
    try:
        return cluster_from_data(data, source, p.resolve().parent, connecting=connecting)
    except ConfigError as exc:
        raise (in_inventory_terms(exc, places) if places else exc) from None
