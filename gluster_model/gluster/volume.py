"""Volume configuration: a validated VolumeConfig, its brick placement, and pure argv builders/parsers.

Validation happens in two steps, both before any remote command: the file alone (``VolumeConfig``), then the
file against the cluster and its Gluster version (``plan_volume``), e.g. replica 3 needs 3 bricks on 3 hosts.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ..config.cluster import ClusterSpec, Frozen, Host
from ..config.yamlio import load_model
from ..errors import ConfigError, ParseError
from ..units import gluster_size, parse_size
from .cli import GlusterVersion, gluster_argv, parse_cli_xml
from .tunables import TRANSLATORS

_VOLNAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
_OPTION_VALUE = re.compile(r"^[A-Za-z0-9._%:,/+*@=-]{1,256}$")


def check_volume_name(name: str, where: str) -> str:
    """``name`` if Gluster accepts it as a volume name (and so it is safe in a printed or sent command)."""
    if not re.fullmatch(_VOLNAME, name):
        raise ConfigError(where, name, "a volume name is 1-64 letters, digits, '_' or '-', starting with a letter "
                          "or digit")
    return name


@lru_cache(maxsize=1)
def known_options() -> frozenset[str]:
    """Option names GlusterFS 10 accepts with `volume set` (captured from `volume set help-xml`/`volume get all`)."""
    text = resources.files("gluster_model.gluster").joinpath("data/options-10.json").read_text()
    return frozenset(json.loads(text)["options"])


def parse_help_xml(text: str, host: str | None = None) -> dict[str, str]:
    """Option name -> default from `gluster volume set help-xml`: the options of the Gluster that answered."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ParseError("gluster volume set help-xml", f"not XML ({exc})", host) from None
    out = {}
    for opt in root.iter("option"):
        name = opt.findtext("name")
        if name:
            out[name.strip()] = (opt.findtext("defaultValue") or "").strip()
    if not out:
        raise ParseError("gluster volume set help-xml", "no option in it", host)
    return out


class Shard(Frozen):
    enabled: bool = True
    block_size: str = "64MB"

    @field_validator("block_size")
    @classmethod
    def _size(cls, v: str) -> str:
        n = parse_size(v)
        if not (4 << 20) <= n <= (4 << 40):
            raise ValueError("shard block size must be between 4MB and 4TB (Gluster's limits)")
        return gluster_size(n)


class VolumeConfig(Frozen):
    """One Gluster volume as the user asks for it."""

    name: str = Field(default="glmodel", pattern=_VOLNAME)
    layout: Literal["distribute", "replicate", "disperse"] = "distribute"
    bricks: int | None = Field(default=None, ge=1, le=512, description="total bricks; default one per server used")
    servers: int | None = Field(default=None, ge=1, description="how many of the cluster's servers to use")
    replica: int | None = Field(default=None, ge=2, le=16)
    arbiter: int | None = Field(default=None, ge=1, le=1)
    disperse: int | None = Field(default=None, ge=3, le=64, description="bricks per disperse set")
    redundancy: int | None = Field(default=None, ge=1)
    stripe: int | None = Field(default=None, ge=2, description="GlusterFS < 6 only; use shard or disperse")
    shard: Shard | None = None
    translators: dict[Literal["write-behind", "read-ahead", "io-cache", "quick-read", "md-cache"], bool] = {}
    cache_size: str | None = Field(default=None, description="performance.cache-size, e.g. 32MB")
    options: dict[str, str] = {}

    @field_validator("cache_size")
    @classmethod
    def _cache(cls, v: str | None) -> str | None:
        if v is None:
            return v
        n = parse_size(v)
        if not (4 << 10) <= n <= (32 << 30):
            raise ValueError("cache_size must be between 4KB and 32GB")
        return gluster_size(n)

    @field_validator("options")
    @classmethod
    def _options(cls, v: dict[str, str]) -> dict[str, str]:
        known = known_options()
        for key, value in v.items():
            if key not in known:
                close = sorted(k for k in known if k.split(".")[-1] == key.split(".")[-1])
                hint = f"; did you mean {close[0]}?" if close else ""
                raise ValueError(f"'{key}' is not a GlusterFS volume option{hint}")
            if not _OPTION_VALUE.match(str(value)):
                raise ValueError(f"value {value!r} of '{key}' has characters a volume option never needs")
            if key in TRANSLATORS.values() or key in ("performance.cache-size", "features.shard",
                                                      "features.shard-block-size"):
                raise ValueError(f"'{key}' has its own key (translators, cache_size, shard); set it there")
        return {k: str(val) for k, val in v.items()}

    @model_validator(mode="after")
    def _layout(self) -> VolumeConfig:
        if self.layout == "replicate":
            if self.replica is None:
                raise ValueError("layout replicate needs 'replica' (2 or more)")
            if self.arbiter and self.replica != 3:
                raise ValueError("arbiter 1 works only with replica 3 (two data bricks and one arbiter)")
        elif self.replica or self.arbiter:
            raise ValueError("'replica'/'arbiter' belong to layout replicate")
        if self.layout == "disperse":
            if self.disperse is None:
                raise ValueError("layout disperse needs 'disperse' (bricks per set, 3 or more)")
            r = self.redundancy if self.redundancy is not None else 1
            if 2 * r >= self.disperse:
                raise ValueError(f"redundancy {r} must be less than half of disperse {self.disperse}")
        elif self.disperse or self.redundancy:
            raise ValueError("'disperse'/'redundancy' belong to layout disperse")
        if self.stripe and self.shard and self.shard.enabled:
            raise ValueError("choose stripe or shard, not both")
        return self

    @property
    def set_size(self) -> int:
        """Bricks per replica/disperse/stripe set (1 for plain distribute)."""
        if self.layout == "replicate":
            return self.replica or 1
        if self.layout == "disperse":
            return self.disperse or 1
        return self.stripe or 1

    def volume_options(self) -> dict[str, str]:
        """Every option glmodel sets, in a stable order (and reads back after setting)."""
        out: dict[str, str] = {}
        for name, on in sorted(self.translators.items()):
            out[TRANSLATORS[name]] = "on" if on else "off"
        if self.cache_size:
            out["performance.cache-size"] = self.cache_size
        if self.shard is not None:
            out["features.shard"] = "on" if self.shard.enabled else "off"
            if self.shard.enabled:
                out["features.shard-block-size"] = self.shard.block_size
        out.update(sorted(self.options.items()))
        return out


# Defaults of GlusterFS 10 for the client-side caches that outlive a file's close (volume set help).
QUICK_READ_MAX_FILE = 64 << 10  # performance.quick-read max-file-size


def client_keeps_file_data(volume: VolumeConfig, file_size: int) -> bool:
    """Whether the FUSE client process can hold file data from one run into the next (so only a remount gives
    the next run a cold client): io-cache, or quick-read for files it caches whole. Read-ahead and write-behind
    buffers belong to open files and end at close; the kernel's page cache is dropped between passes anyway."""
    opts = volume.volume_options()
    if opts.get("performance.io-cache", "off") == "on":
        return True
    return opts.get("performance.quick-read", "on") == "on" and file_size <= QUICK_READ_MAX_FILE


def load_volume(path: str | Path) -> VolumeConfig:
    return load_model(path, VolumeConfig, "describing one volume (name, layout, ...)")


@dataclass(frozen=True)
class Brick:
    host: Host
    path: str

    @property
    def spec(self) -> str:
        return f"{self.host.address}:{self.path}"


@dataclass(frozen=True)
class VolumePlan:
    """A VolumeConfig placed on a cluster: which bricks, on which hosts, with which create argv."""

    config: VolumeConfig
    bricks: tuple[Brick, ...]
    servers: tuple[Host, ...]

    def create_args(self) -> list[str]:
        c = self.config
        args = ["volume", "create", c.name]
        if c.layout == "replicate":
            args += ["replica", str(c.replica)]
            if c.arbiter:
                args += ["arbiter", str(c.arbiter)]
        elif c.layout == "disperse":
            args += ["disperse", str(c.disperse), "redundancy", str(c.redundancy or 1)]
        if c.stripe:
            args += ["stripe", str(c.stripe)]
        args += [b.spec for b in self.bricks]
        # Bricks on a root filesystem (the lab, many test rigs) and replica sets sharing a host need force.
        args.append("force")
        return args


def plan_volume(config: VolumeConfig, cluster: ClusterSpec, version: GlusterVersion | None = None,
                source: str = "volume") -> VolumePlan:
    """Place bricks round-robin over the servers used, so every set spans as many hosts as it can."""
    if config.stripe and version is not None and not version.has_stripe:
        raise ConfigError(source, "stripe",
                          f"GlusterFS {version} has no stripe translator (removed in 6); use 'shard: "
                          "{enabled: true, block_size: 64MB}' or layout disperse instead")
    available = list(cluster.servers)
    n_servers = config.servers or len(available)
    if n_servers > len(available):
        raise ConfigError(source, "servers", f"asks for {n_servers} servers but {cluster.source} has {len(available)}")
    used = available[:n_servers]
    # Without an explicit count: one brick per server, rounded up to whole sets (replica 2 on 3 servers: 4).
    n_bricks = config.bricks or -(-max(n_servers, config.set_size) // config.set_size) * config.set_size
    if n_bricks % config.set_size:
        raise ConfigError(source, "bricks", f"{n_bricks} bricks is not a multiple of the set size {config.set_size} "
                          f"({config.layout})")
    if config.layout == "replicate" and n_servers < (config.replica or 1):
        raise ConfigError(source, "replica", f"replica {config.replica} needs at least {config.replica} servers; "
                          f"{n_servers} in use")
    slots = [(h, p) for depth in range(max(len(h.brick_paths) for h in used)) for h in used
             if depth < len(h.brick_paths) for p in (h.brick_paths[depth],)]
    bricks = []
    for i in range(n_bricks):
        host, base = slots[i % len(slots)]
        round_ = i // len(slots)
        bricks.append(Brick(host, f"{base}/{config.name}-b{i}" + (f"-{round_}" if round_ else "")))
    return VolumePlan(config, tuple(bricks), tuple(used))


# -- parsers --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VolumeInfo:
    name: str
    type: str
    status: str
    brick_count: int
    replica: int
    disperse: int
    redundancy: int
    arbiter: int
    bricks: tuple[str, ...]
    options: dict[str, str]


def parse_volume_info_xml(text: str) -> list[VolumeInfo]:
    root = parse_cli_xml(text, "gluster volume info --xml")
    vols = root.find("volInfo/volumes")
    if vols is None:
        raise ParseError("gluster volume info --xml", "missing <volInfo><volumes>")
    out = []
    for v in vols.findall("volume"):
        def num(tag: str, v: ET.Element = v, absent: int | None = None) -> int:
            t = v.findtext(tag)
            if t is None and absent is not None:
                return absent  # older releases leave it out
            if t is None or not t.strip().isdecimal():  # a count: what int() reads (isdigit would take "²")
                raise ParseError("gluster volume info --xml", f"missing or not a count: <{tag}> {t!r}")
            return int(t)
        name = v.findtext("name")
        if not name:
            raise ParseError("gluster volume info --xml", "a <volume> has no <name>")
        bricks = tuple((b.findtext("name") or b.text or "").strip() for b in v.findall("bricks/brick"))
        options = {(o.findtext("name") or ""): (o.findtext("value") or "") for o in v.findall("options/option")}
        out.append(VolumeInfo(name, v.findtext("typeStr") or "", v.findtext("statusStr") or "",
                              num("brickCount"), num("replicaCount"), num("disperseCount"),
                              num("redundancyCount"), num("arbiterCount", absent=0), bricks, options))
    return out


def parse_volume_get_xml(text: str) -> dict[str, str]:
    """Options and values from ``gluster volume get VOL OPTION|all --xml``."""
    root = parse_cli_xml(text, "gluster volume get --xml")
    opts = root.find("volGetopts")
    if opts is None:
        raise ParseError("gluster volume get --xml", "missing <volGetopts>")
    return {(o.findtext("Option") or "").strip(): (o.findtext("Value") or "").strip() for o in opts.findall("Opt")}


@dataclass(frozen=True)
class BrickStatus:
    host: str
    path: str
    online: bool
    port: int | None
    pid: int | None


def parse_volume_status_xml(text: str) -> list[BrickStatus]:
    root = parse_cli_xml(text, "gluster volume status --xml")
    nodes = root.findall("volStatus/volumes/volume/node")
    if root.find("volStatus") is None:
        raise ParseError("gluster volume status --xml", "missing <volStatus>")
    out = []
    for n in nodes:
        path = n.findtext("path") or ""
        if not path.startswith("/"):
            continue  # self-heal daemons and other services, not bricks
        port = n.findtext("port") or ""
        pid = n.findtext("pid") or ""
        out.append(BrickStatus(n.findtext("hostname") or "", path, (n.findtext("status") or "") == "1",
                               int(port) if port.isdecimal() and port != "0" else None,
                               int(pid) if pid.isdecimal() and pid != "-1" else None))
    return out


def parse_heal(text: str) -> int | None:
    """Sum of 'Number of entries: N' over the bricks of ``gluster volume heal VOL statistics heal-count``;
    None when the output names no count (a distributed volume, or a self-heal daemon that did not answer)."""
    counts = re.findall(r"^Number of entries:\s*(\d+)\s*$", text, re.M)
    return sum(map(int, counts)) if counts else None


def values_match(wanted: str, got: str) -> bool:
    """Gluster reads values back normalised (on/enable/true, 64MB/67108864): compare by meaning."""
    booleans = {"on": True, "enable": True, "true": True, "yes": True, "1": True,
                "off": False, "disable": False, "false": False, "no": False, "0": False}
    w, g = wanted.strip().lower(), got.strip().lower().replace(" (default)", "")
    if w in booleans and g in booleans:
        return booleans[w] == booleans[g]
    try:
        return parse_size(w) == parse_size(g)
    except ValueError:
        return w == g


def volume_argv(host: Host, *args: str, xml: bool = False) -> list[str]:
    return gluster_argv(*args, socket=host.glusterd_socket, xml=xml)
