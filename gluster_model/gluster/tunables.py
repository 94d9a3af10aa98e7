"""The volume options glmodel can vary and advise on, named once: each one's `gluster volume set` key, GlusterFS
10's default, the levels a tuning plan tries, the options it needs set with it, and what it trades (its safety
note, printed beside any advice that sets it).

The study's six (translators on/off and io-cache size) are set through their own VolumeConfig keys; the others,
the options administrators ask about (read policy of a replica, client and brick threading, directory and
metadata caching, write-behind's window), through ``VolumeConfig.options``. Plan factors, the dataset's feature
columns and defaults, and tune's option space are read from ``TUNABLES``: a new option is one entry here.

Notes paraphrase the GlusterFS administration guide and `gluster volume set help` of GlusterFS 10.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..units import gluster_size

Kind = Literal["bool", "int", "size", "choice", "group"]


@dataclass(frozen=True)
class Tunable:
    """One volume option as a factor: ``name`` is the plan factor and the model's feature."""

    name: str
    option: str  # the `gluster volume set` key (a group's name for kind "group")
    kind: Kind
    default: Any  # GlusterFS 10's default (bool, int bytes/count, or a choice's text)
    note: str  # what setting it trades, from Gluster's documentation
    levels: tuple[Any, ...] = ()  # what a tuning plan tries besides the default
    with_on: Mapping[str, str] = field(default_factory=dict)  # options set with it when it is on (a group's own)
    study: bool = False  # one of the study's six, set through VolumeConfig's own keys
    translator: str = ""  # a study translator's key in VolumeConfig.translators ("write-behind", ...)

    def value_text(self, value: Any) -> str:
        """The value as `gluster volume set` takes it."""
        if self.kind in ("bool", "group"):
            return "on" if value else "off"
        if self.kind == "size":
            return gluster_size(int(value))
        return str(value)

    def settings(self, value: Any) -> dict[str, str]:
        """The `volume set` options that give this value (a group's members; a switch's companions when on)."""
        if self.kind == "group":
            return dict(self.with_on) if value else {}
        out = {self.option: self.value_text(value)}
        if self.kind == "bool" and value:
            out.update(self.with_on)
        return out

    def commands(self, volume: str, value: Any) -> list[str]:
        """The `gluster volume set` lines for this value (a group in one line, as Gluster ships it)."""
        if self.kind == "group":
            return [f"gluster volume set {volume} group {self.option}"] if value else []
        return [f"gluster volume set {volume} {k} {v}" for k, v in self.settings(value).items()]

    @property
    def keys(self) -> list[str]:
        """The options to read with `gluster volume get` before changing this one."""
        return list(self.with_on) if self.kind == "group" else [self.option, *self.with_on]


_INVALIDATION = {"features.cache-invalidation": "on", "features.cache-invalidation-timeout": "600"}

TUNABLE_LIST: tuple[Tunable, ...] = (
    # The study's six.
    Tunable("write_behind", "performance.write-behind", "bool", True, study=True, translator="write-behind",
            note="acknowledges writes before they reach the bricks: a client crash loses data written since the "
                 "last fsync or close, and a write error may surface only at close"),
    Tunable("read_ahead", "performance.read-ahead", "bool", False, study=True, translator="read-ahead",
            note="prefetches the next pages of a file read in order; costs memory and wasted reads on random I/O"),
    Tunable("io_cache", "performance.io-cache", "bool", False, study=True, translator="io-cache",
            note="caches file data in the client beyond close, checked against the file's mtime: another "
                 "client's change can be read stale for up to cache-timeout (1 s)"),
    Tunable("quick_read", "performance.quick-read", "bool", True, study=True, translator="quick-read",
            note="serves small files (up to 64 KB) whole from the lookup; no consistency trade"),
    Tunable("md_cache", "performance.stat-prefetch", "bool", True, study=True, translator="md-cache",
            note="caches file attributes in the client for md-cache-timeout (1 s): another client's change can "
                 "go unseen that long"),
    Tunable("cache_size", "performance.cache-size", "size", 32 << 20, study=True,
            note="memory io-cache may use in each client process"),
    # The options administrators ask about.
    Tunable("read_hash_mode", "cluster.read-hash-mode", "choice", "1", levels=("2", "3"),
            note="which replica serves a file's reads (AFR reads only good copies; no consistency trade): 1, the "
                 "default, sends every client's reads of a file to one brick; 2 hashes the client process too; "
                 "3 picks the brick with the fewest reads outstanding"),
    Tunable("choose_local", "cluster.choose-local", "bool", True, levels=(False,),
            note="reads from a replica on the client's own host when there is one; no consistency trade"),
    Tunable("client_io_threads", "performance.client-io-threads", "bool", True, levels=(False,),
            note="runs a client's requests on a thread pool rather than the FUSE thread; costs client CPU"),
    Tunable("client_event_threads", "client.event-threads", "int", 2, levels=(4, 8),
            note="threads handling a client's network events; each can take a core under load"),
    Tunable("server_event_threads", "server.event-threads", "int", 2, levels=(4, 8),
            note="threads handling a brick's network events; each can take a core of the server under load"),
    Tunable("io_thread_count", "performance.io-thread-count", "int", 16, levels=(4, 32),
            note="brick threads serving requests; more help many clients on fast disks, at server CPU and "
                 "memory"),
    Tunable("write_behind_window", "performance.write-behind-window-size", "size", 1 << 20,
            levels=(4 << 20, 16 << 20),
            note="unflushed data each open file may hold in the client: a larger window loses more acknowledged "
                 "data if the client crashes before close or fsync"),
    Tunable("remote_dio", "network.remote-dio", "bool", False, levels=(True,),
            note="drops O_DIRECT at the client, so the bricks write through their page cache (as an NFS server "
                 "does): a write acknowledged to an O_DIRECT writer (a VM image opened with cache=none) can sit in "
                 "a server's memory and is lost if that server loses power before it flushes; fsync still syncs"),
    Tunable("parallel_readdir", "performance.parallel-readdir", "bool", False, levels=(True,),
            with_on={"performance.readdir-ahead": "on"},
            note="reads a directory from every distribute subvolume at once through readdir-ahead's cache; "
                 "costs client memory per directory, helps most with many bricks"),
    Tunable("nl_cache", "nl-cache", "group", False, levels=(True,),
            with_on={**_INVALIDATION, "performance.nl-cache": "on", "performance.nl-cache-timeout": "600"},
            note="caches 'no such file' answers in the client, kept correct by the bricks' upcall invalidations: "
                 "a file another client creates can look absent until its invalidation arrives; upcalls cost "
                 "brick work"),
    Tunable("metadata_cache", "metadata-cache", "group", False, levels=(True,),
            with_on={**_INVALIDATION, "performance.cache-invalidation": "on", "performance.md-cache-timeout": "600",
                     "network.inode-lru-limit": "200000"},
            note="caches attributes for 600 s, kept correct by the bricks' upcall invalidations: a change by a "
                 "client can reach others late if an upcall is lost; upcalls cost brick work, the inode table "
                 "client memory"),
)
TUNABLES: dict[str, Tunable] = {t.name: t for t in TUNABLE_LIST}
ADMIN_TUNABLES: tuple[Tunable, ...] = tuple(t for t in TUNABLE_LIST if not t.study)
# The study's translators: plan factor -> VolumeConfig.translators key, and that key -> its `volume set` option.
TRANSLATOR_FACTORS: dict[str, str] = {t.name: t.translator for t in TUNABLE_LIST if t.translator}
TRANSLATORS: dict[str, str] = {t.translator: t.option for t in TUNABLE_LIST if t.translator}
DEFAULTS: dict[str, Any] = {t.name: t.default for t in TUNABLE_LIST}
# Every `volume set` key an admin tunable can set (the servers are asked whether they have each before it is
# set; the study's six are as old as Gluster's translators).
TUNABLE_KEYS: frozenset[str] = frozenset(k for t in ADMIN_TUNABLES for k in t.keys)


def options_of(point: Mapping[str, Any]) -> dict[str, str]:
    """The `volume set` options the admin tunables of a design point give (the study's six have keys of their
    own); ValueError when two of them set one option differently."""
    out: dict[str, str] = {}
    for t in ADMIN_TUNABLES:
        if t.name not in point:
            continue
        for key, value in t.settings(point[t.name]).items():
            if out.get(key, value) != value:
                raise ValueError(f"{t.name} sets {key} to {value}, which another option set to {out[key]}")
            out[key] = value
    return out
