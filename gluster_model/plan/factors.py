"""The factors a plan may vary, their families and types, and how one design point becomes concrete configs.

A *point* is a mapping factor -> level. ``realize`` turns it into a VolumeConfig (volume factors plus the
number of servers), an Workload (workload factors plus the number of clients) and a canonical feature
record; factors that do not apply to a point (``replica`` on a distribute volume) are dropped there, so two
points that only differ in an inapplicable factor are the same run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..bench.engine_specs import ENGINE_NAMES
from ..bench.workload import LATER_SETTINGS, FixedWorkload, Workload
from ..design.levels import Level as Level  # one kind of level for designs and plans
from ..gluster.tunables import ADMIN_TUNABLES, TRANSLATOR_FACTORS, options_of
from ..gluster.volume import Shard, VolumeConfig
from ..hardware.emulation import is_share, parse_share
from ..hardware.settings import BACKINGS, NO_SHARES, OPTIONS as HARDWARE_KNOBS, canonical
from ..units import gluster_size, parse_size, parse_switch

Family = Literal["volume", "workload", "cluster", "lab"]
READ_HASH_MODES = ("0", "1", "2", "3", "4", "5")  # cluster.read-hash-mode's values (GlusterFS 10)
Kind = Literal["int", "size", "bool", "choice", "hardware"]


@dataclass(frozen=True)
class Factor:
    name: str
    family: Family
    kind: Kind
    choices: tuple[str, ...] = ()
    help: str = ""


_F = [
    Factor("layout", "volume", "choice", ("distribute", "replicate", "disperse"), "volume type"),
    Factor("replica", "volume", "int", help="copies (layout replicate)"),
    Factor("disperse", "volume", "int", help="bricks per disperse set (layout disperse)"),
    Factor("redundancy", "volume", "int", help="redundancy of a disperse set"),
    Factor("shard", "volume", "bool", help="features.shard (Gluster's striping since 6)"),
    Factor("shard_block_size", "volume", "size", help="features.shard-block-size (with shard on)"),
    Factor("write_behind", "volume", "bool", help="performance.write-behind"),
    Factor("read_ahead", "volume", "bool", help="performance.read-ahead"),
    Factor("io_cache", "volume", "bool", help="performance.io-cache"),
    Factor("quick_read", "volume", "bool", help="performance.quick-read"),
    Factor("md_cache", "volume", "bool", help="performance.stat-prefetch"),
    Factor("cache_size", "volume", "size", help="performance.cache-size"),
    # the options administrators ask about (gluster.tunables), with the option each sets
    *(Factor(t.name, "volume", "bool" if t.kind == "group" else t.kind,
             READ_HASH_MODES if t.kind == "choice" else (),
             f"group {t.option}" if t.kind == "group" else t.option) for t in ADMIN_TUNABLES),
    Factor("file_size", "workload", "size", help="iozone -s / dd's file, per thread"),
    Factor("record_size", "workload", "size", help="block size: iozone -r (1KB..16MB), dd bs= (from 1 byte)"),
    Factor("threads", "workload", "int", help="iozone -t, spread over the clients used"),
    Factor("sync", "workload", "choice", ("none", "osync", "odirect"), "O_SYNC (-o) or O_DIRECT (-I)"),
    Factor("engine", "workload", "choice", ENGINE_NAMES,
           "iozone -+m, dd per file (any block size), or fio --client (IOPS, latency, small files)"),
    Factor("files", "workload", "int", help="files per thread of the small-file tests (engine fio)"),
    Factor("target", "workload", "choice", ("gluster", "local"), "the Gluster mount or each client's own disk"),
    Factor("degraded", "workload", "bool", help="reads with one replica's brick stopped (layout replicate)"),
    Factor("cache", "workload", "choice", ("dropped", "kept"), "caches dropped before each pass, or kept warm"),
    Factor("shared_read", "workload", "bool", help="every client reads one file, not its own (engine fio)"),
    Factor("large_files", "workload", "int",
           help="files each thread's file_size is spread over for the large-file tests (engine fio)"),
    Factor("servers", "cluster", "int", help="servers used for bricks (the first N of the cluster file)"),
    Factor("clients", "cluster", "int", help="clients running iozone (the first N of the cluster file)"),
    # Hardware a plan changes on the local lab (every node; the driver asks the lab between volumes) or, for
    # the knobs a cluster can emulate, on its hosts: one factor per knob of hardware.settings.
    *(Factor(k.factor_name, "lab", "choice" if k.name == "backing" else "hardware",
             BACKINGS if k.name == "backing" else (), f"every node's {k.help[0].lower()}{k.help[1:]}")
      for k in HARDWARE_KNOBS),
]
FACTORS: dict[str, Factor] = {f.name: f for f in _F}
LAB_FACTORS = tuple(f.name for f in _F if f.family == "lab")

MAX_SIZE = 1 << 50  # 1 PiB: larger sizes are typing errors (a trial would run for years)
IO_CACHE_MIN = 4 << 20  # io-cache's cache-size range starts here (its option table, GlusterFS 10)


def normalize_level(factor: Factor, value: Any) -> Level:
    """Check and normalize one level; raise ValueError with what is allowed."""
    if factor.kind == "bool":
        return parse_switch(value)
    if factor.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{value!r} is not a positive integer")
        return value
    if factor.kind == "size":
        n = parse_size(value)
        if n < 1:
            raise ValueError(f"{value!r} is not a positive size")
        if n > MAX_SIZE:
            raise ValueError(f"{value!r} is more than {MAX_SIZE >> 40} TB; no trial of that size would end")
        return n
    if factor.kind == "hardware":
        if is_share(value):  # a share of each host's own hardware (emulation on a cluster): "50%"
            if factor.name in NO_SHARES:
                raise ValueError(f"{value!r}: {factor.name} is not a share of a host's hardware (give a value)")
            return str(parse_share(str(value)) or "100%")
        return canonical(factor.name, str(value))  # canonical text: "1gbit", "150MB/s", "unlimited"
    if str(value) not in factor.choices:
        raise ValueError(f"{value!r} is not one of {', '.join(factor.choices)}")
    return str(value)


@dataclass(frozen=True)
class RunSpec:
    """One run: a design point made concrete."""

    features: dict[str, Level]        # canonical: only the factors that apply, plus defaults made explicit
    volume: VolumeConfig
    workload: Workload
    config_hash: str
    volume_key: str
    lab: tuple[tuple[str, str], ...] = ()  # lab hardware this run needs, e.g. (("brick_backing", "xfs"),)

    @property
    def label(self) -> str:
        return show_features(self.features)


def show_features(features: Mapping[str, Level]) -> str:
    """'layout=replicate, replica=3, shard=off, file_size=4MB, ...' for tables and logs."""
    return ", ".join(f"{k}={_show(v)}" for k, v in features.items())


def _show(v: Level) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, int) and v >= 1024 and v % 1024 == 0:
        return gluster_size(v)
    return str(v)


def digest(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj`` (sorted keys, no whitespace)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def realize(point: Mapping[str, Level], fixed_workload: FixedWorkload, volume_options: Mapping[str, str]) -> RunSpec:
    """Turn a design point into a run (the plan's workload with the point's workload factors); raises ValueError
    for a combination Gluster cannot build."""
    p = dict(point)
    layout = str(p.get("layout", "distribute"))
    feats: dict[str, Level] = {"layout": layout}
    vol: dict[str, Any] = {"layout": layout}
    if layout == "replicate":
        feats["replica"] = vol["replica"] = int(p.get("replica", 3))
    if layout == "disperse":
        feats["disperse"] = vol["disperse"] = int(p.get("disperse", 3))
        feats["redundancy"] = vol["redundancy"] = int(p.get("redundancy", 1))
    shard = bool(p.get("shard", False))
    feats["shard"] = shard
    if shard:
        size = int(p.get("shard_block_size", 64 << 20))
        feats["shard_block_size"] = size
        vol["shard"] = Shard(enabled=True, block_size=f"{size}")
    translators = {}
    for fname, tname in TRANSLATOR_FACTORS.items():
        if fname in p:
            feats[fname] = bool(p[fname])
            translators[tname] = bool(p[fname])
    vol["translators"] = translators
    if "cache_size" in p:
        if translators.get("io-cache") and int(p["cache_size"]) < IO_CACHE_MIN:
            # GlusterFS 10 accepts the option, then every client graph with io-cache fails to load (no mount).
            raise ValueError("io-cache needs cache_size of at least 4MB (GlusterFS refuses less)")
        feats["cache_size"] = int(p["cache_size"])
        vol["cache_size"] = f"{int(p['cache_size'])}"
    if "servers" in p:
        feats["servers"] = vol["servers"] = int(p["servers"])
    tuned = {t.name: p[t.name] for t in ADMIN_TUNABLES if t.name in p}
    if tuned.get("metadata_cache") and translators.get("md-cache") is False:
        raise ValueError("metadata_cache turns md-cache (performance.stat-prefetch) on; not with md_cache off")
    feats.update(tuned)
    set_by_factors = options_of(tuned)
    clash = sorted(k for k in set_by_factors if k in volume_options)
    if clash:
        raise ValueError(f"volume_options sets {', '.join(clash)}, which a factor of the plan sets too")
    vol["options"] = {**volume_options, **set_by_factors}
    wl: dict[str, Any] = fixed_workload.model_dump()
    for name in ("file_size", "record_size"):
        if name in p:
            wl[name] = f"{int(p[name])}"
    for name in ("threads", "sync", *LATER_SETTINGS):
        if name in p:
            wl[name] = p[name]
    if "clients" in p:
        wl["clients"] = int(p["clients"])
    lab = tuple((name, str(p[name])) for name in LAB_FACTORS if name in p)
    workload = Workload.model_validate(wl)
    if workload.degraded and (layout != "replicate" or int(p.get("replica", 3)) < 2):
        raise ValueError("degraded reads need layout replicate with replica 2 or more")
    if parse_size(workload.record_size) > parse_size(workload.file_size):
        raise ValueError(f"record_size {workload.record_size} is larger than file_size {workload.file_size}")
    feats.update(file_size=parse_size(workload.file_size), record_size=parse_size(workload.record_size),
                 threads=workload.threads, sync=workload.sync)
    # Only away from their defaults: older runs, which had no such setting, keep their features and hash.
    feats.update({k: v for k, v in workload.identity.items()  # type: ignore[misc]
                  if k in LATER_SETTINGS})
    if workload.clients is not None:
        feats["clients"] = workload.clients
    volume_body = VolumeConfig.model_validate({**vol, "name": "probe"}).model_dump(exclude={"name"}, mode="json")
    feats.update(lab)
    # The lab setting is part of the volume's identity: the same volume on other hardware is another volume.
    volume_key = digest({**volume_body, **({"lab": dict(lab)} if lab else {})})
    volume = VolumeConfig.model_validate({**vol, "name": f"gm{volume_key[:10]}"})
    config = {"volume": volume_body, "workload": workload.identity, **({"lab": dict(lab)} if lab else {})}
    return RunSpec(feats, volume, workload, digest(config), volume_key, lab)
