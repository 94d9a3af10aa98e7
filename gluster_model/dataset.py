"""The store's trials as one tidy table: a row per trial, features as typed columns, metrics in MB/s (the
small-file rates in files/s).

This is the table `glmodel export` writes and the modelling layer reads. Campaign-level hardware features
come from the measured baselines, never from labels: ``network_gbps`` (a host's link: the median over clients
and directions of what one client moved to or from all servers at once in the iperf3 matrix, so a NIC shared
by several peers counts whole), ``disk_read_mbps``/``disk_write_mbps`` (median sequential fio figure over the bricks), and
``base_filesystem`` (the filesystem under the bricks, from the host facts).
"""

from __future__ import annotations

import csv

import statistics
from pathlib import Path
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .bench.metrics import METRICS as METRICS
from .errors import ConfigError, GlmodelError
from .gluster.tunables import ADMIN_TUNABLES, DEFAULTS as TUNABLE_DEFAULTS
from .hardware.cpu_share import load_scores
from .store.identity import SETTING_PREFIX, Purpose, legacy_info, setting_columns
from .units import parse_size, parse_switch

if TYPE_CHECKING:
    import pandas as pd

    from .store.store import Store

NUMERIC = ("replica", "disperse", "redundancy", "shard_block_size", "cache_size", "file_size", "record_size",
           "threads", "files", "large_files", "servers", "clients", "network_gbps", "disk_read_mbps",
           "disk_write_mbps", "disk_randread_iops", "disk_randwrite_iops", "client_ram_gb",
           "cpu_score", *(t.name for t in ADMIN_TUNABLES if t.kind in ("int", "size")))
CATEGORICAL = ("layout", "sync", "base_filesystem", "regime", *(t.name for t in ADMIN_TUNABLES if t.kind == "choice"))
BOOLEAN = ("shard", "write_behind", "read_ahead", "io_cache", "quick_read", "md_cache", "shared_read",
           *(t.name for t in ADMIN_TUNABLES if t.kind in ("bool", "group")))
_JSON_FEATURES = frozenset({"files", "large_files", "shared_read", *(t.name for t in ADMIN_TUNABLES)})
# The study's feature families. "hardware": what is bought and how the cluster is laid out; "gluster": the
# volume's tuning once the hardware is fixed; "unified": everything, the study's future work.
FAMILIES: dict[str, tuple[str, ...]] = {
    "hardware": ("network_gbps", "network_rtt_ms", "disk_read_mbps", "disk_write_mbps", "client_ram_gb", "cpu_score",
                 "base_filesystem", "servers", "clients", "shard", "replica", "file_size"),
    # The study's second model: volume options with the workload they serve (O_SYNC on and off; file size puts a
    # run in the cached or uncached regime when the hardware is fixed).
    "gluster": ("record_size", "cache_size", "write_behind", "read_ahead", "io_cache", "quick_read", "md_cache",
                "sync", "file_size", *(t.name for t in ADMIN_TUNABLES)),
}
FAMILIES["unified"] = tuple(dict.fromkeys((*FAMILIES["hardware"], *FAMILIES["gluster"], "layout", "disperse",
                                            "redundancy", "shard_block_size", "threads")))

# What a volume has when a plan leaves a knob alone (GlusterFS 10, `gluster volume get VOL all` on a new volume;
# an integration test checks these against the lab's servers). Filling them lets campaigns that varied
# different knobs be pooled.
GLUSTER_DEFAULTS: dict[str, Any] = {**TUNABLE_DEFAULTS, "shard": False, "shard_block_size": 64 << 20}
# Workload settings a run's features carry only away from their default (Workload.identity)
_WORKLOAD_DEFAULTS: dict[str, Any] = {"shared_read": False, "large_files": 1}
# A metric's column holds throughputs in MB/s and small-file rates in files/s; measurements in other units (per
# reader seconds, IOPS, latency percentiles) stay out of the table.
_UNIT_SCALE = {"kB/s": 1 / 1024, "KB/s": 1 / 1024, "MB/s": 1.0, "B/s": 1 / (1 << 20), "files/s": 1.0}


def campaign_hardware(store: Store) -> dict[str, dict[str, float | str | None]]:
    """Per campaign: measured network and disk figures and the brick filesystem (None where not measured)."""
    by_campaign: dict[str, dict[str, list[float]]] = {}
    links: dict[tuple[str, str, str], float] = {}  # (campaign, direction, client) -> bit/s over its servers
    for row in store.baseline_table():
        d = by_campaign.setdefault(row["campaign"], {"net": [], "dr": [], "dw": [], "rtt": [], "rr": [], "rw": []})
        if row["kind"] == "network" and row["test"] == "rtt":
            if row["value"] is not None:
                d["rtt"].append(row["value"])
        elif row["kind"] == "network" and row["value"]:
            key = (row["campaign"], row["test"], row["host"])
            links[key] = links.get(key, 0.0) + row["value"]
        elif row["kind"] == "disk" and row["test"] == "seq_read":
            d["dr"].append(row["value"] / 1e6)
        elif row["kind"] == "disk" and row["test"] == "seq_write":
            d["dw"].append(row["value"] / 1e6)
        elif row["kind"] == "disk" and row["test"] in ("rand_read_iops", "rand_write_iops") and row["value"]:
            d["rr" if row["test"] == "rand_read_iops" else "rw"].append(row["value"])
    for (campaign, _, _), bps in links.items():
        by_campaign[campaign]["net"].append(bps / 1e9)
    out: dict[str, dict[str, float | str | None]] = {}
    for c in store.campaigns():
        d = by_campaign.get(c.name, {"net": [], "dr": [], "dw": [], "rtt": [], "rr": [], "rw": []})
        hosts = store.hosts(c.id)
        fstypes = [t for h in hosts for t in h.facts.brick_fstypes]
        roles = [set(h.roles) for h in hosts]
        rams = [h.facts.ram_bytes for h, r in zip(hosts, roles) if "client" in r and h.facts.ram_bytes]
        out[c.name] = {
            "servers_total": sum(1 for r in roles if "server" in r) or None,
            "clients_total": sum(1 for r in roles if "client" in r) or None,
            "client_ram_gb": min(rams) / 2**30 if rams else None,
            # The slowest host's score under load (hosts of one machine share its cores: hardware/cpu_share.py):
            # a Gluster I/O path runs through client and server alike.
            "cpu_score": min(scores) if (scores := list(load_scores({h.address: h.facts
                                                                     for h in hosts}).values())) else None,
            "network_gbps": statistics.median(d["net"]) if d["net"] else None,
            # the typical client-server round trip (TCP handshakes, bench.rtt)
            "network_rtt_ms": statistics.median(d["rtt"]) if d["rtt"] else None,
            "disk_read_mbps": statistics.median(d["dr"]) if d["dr"] else None,
            "disk_write_mbps": statistics.median(d["dw"]) if d["dw"] else None,
            "base_filesystem": statistics.mode(fstypes) if fstypes else None,
            # small random records (fio's 4 KB rand_read/rand_write, where the plan's baselines ask for them):
            # what bounds random I/O and small files on a disk, which its sequential MB/s does not say
            **({"disk_randread_iops": statistics.median(d["rr"])} if d["rr"] else {}),
            **({"disk_randwrite_iops": statistics.median(d["rw"])} if d["rw"] else {}),
        }
    return out


def _fill_effective(frame: pd.DataFrame) -> pd.DataFrame:
    """Replace "not set by the plan" with what the run really had: all servers/clients of the cluster, one copy
    outside replicate volumes, no dispersal outside disperse volumes, Gluster's defaults for untouched knobs."""
    for col, total in (("servers", "servers_total"), ("clients", "clients_total")):
        if total in frame:
            frame[col] = frame[col].astype("Float64").fillna(frame[total].astype("Float64"))
    frame = frame.drop(columns=[c for c in ("servers_total", "clients_total") if c in frame])
    if "layout" in frame:
        frame.loc[frame["layout"] != "replicate", "replica"] = 1
        for col in ("disperse", "redundancy"):
            frame.loc[frame["layout"] != "disperse", col] = 0
    for col, value in {**GLUSTER_DEFAULTS, **_WORKLOAD_DEFAULTS}.items():
        if col in frame:
            frame[col] = frame[col].astype(object).where(frame[col].notna(), value)
    if "shard_block_size" in frame and "shard" in frame:
        frame.loc[~frame["shard"].astype(bool), "shard_block_size"] = 0
    return frame


# The columns that say where a row was measured and why, first in every exported row.
_CAMPAIGN_COLUMNS = ("campaign", "cluster", "purpose", "again_of")
# A trial table's columns an exported row leaves out: the long form's own, the setting (as setting_* columns
# instead), a comparison's look (compare reads it from the store; a model pools the looks as campaigns) and a
# search's round (the search reads it from the store).
_NOT_EXPORTED = frozenset({"metric", "value", "unit", "trial_id", "features", "plan_name", "setting", "comparison",
                           "side", "look", "search", "search_round"})


def trial_frame(store: Store, campaign: str | None = None, *, include_warmups: bool = False,
                include_outliers: bool = False, include_failed: bool = False) -> pd.DataFrame:
    """One row per trial of finished runs (all runs with ``include_failed``), metrics as MB/s columns.

    Without ``campaign``, verification campaigns (``glmodel verify``) are left out: a model is never fitted on
    the measurements that check it."""
    import pandas as pd

    rows = store.trial_table(campaign)
    if campaign is None:
        rows = [r for r in rows if r["purpose"] != Purpose.VERIFICATION.value]
    hw = campaign_hardware(store)
    trials: dict[int, dict[str, Any]] = {}
    for r in rows:
        if not include_failed and (r["run_status"] != "done" or r["trial_status"] != "ok"):
            continue
        if r["warmup"] and not include_warmups:
            continue
        if r["outlier"] and not include_outliers:
            continue
        t = trials.get(r["trial_id"])
        if t is None:
            t = {"store": store.where, **{k: r[k] for k in _CAMPAIGN_COLUMNS},
                 **{k: v for k, v in r.items() if k not in _NOT_EXPORTED},
                 **setting_columns(tuple((r["setting"] or {}).items()))}
            # features the store keeps only in a run's JSON (the admin tunables, files per thread)
            t.update({k: v for k, v in (r["features"] or {}).items() if k in _JSON_FEATURES and k not in t})
            t.update(hw.get(r["campaign"], {}))
            trials[r["trial_id"]] = t
        if r["metric"] in METRICS and r["unit"] in _UNIT_SCALE:
            t[r["metric"]] = r["value"] * _UNIT_SCALE[r["unit"]]
    frame = pd.DataFrame(list(trials.values()))
    if frame.empty:
        return frame
    return _typed(_fill_effective(frame))


def flagged_note(frame: pd.DataFrame) -> str | None:
    """One sentence on the trials flagged as outliers in ``frame`` (and why), for a fit's notes."""
    if frame.empty or "outlier" not in frame:
        return None
    flagged = frame[frame["outlier"].astype(bool)]
    if flagged.empty:
        return None
    why = flagged["flagged_because"] if "flagged_because" in flagged else None
    kinds: dict[str, int] = {}
    for text in (why.fillna("") if why is not None else [""] * len(flagged)):
        kind = "disturbed" if str(text).startswith("disturbed") else "far from their run's others" if text \
            else "flagged"
        kinds[kind] = kinds.get(kind, 0) + 1
    return (f"{len(flagged)} flagged trial(s) left out (" + ", ".join(f"{n} {k}" for k, n in kinds.items())
            + "); `glmodel runs show` gives each one's reason")


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Every known column with its type: metrics and numeric features as numbers, categories, nullable booleans."""
    import pandas as pd

    for m in METRICS:
        if m not in frame:
            frame[m] = float("nan")
    for col in CATEGORICAL:
        if col in frame:
            frame[col] = frame[col].astype("category")
    for col in BOOLEAN:
        if col in frame:
            frame[col] = frame[col].map(_bool, na_action="ignore").astype("boolean")
    for col in (*NUMERIC, *METRICS):
        if col in frame:
            frame[col] = pd.to_numeric(frame[col])
            _check_range(frame[col])
    return frame.reset_index(drop=True)


# What `glmodel export` can write in each kind of column; a value outside is a wrong file, or wrong headers.
COUNTS = {"servers": (1, 4096), "clients": (1, 4096), "replica": (1, 64), "threads": (1, 65536),
          "disperse": (0, 256), "redundancy": (0, 128)}
_LIMIT: dict[str, tuple[float, float]] = {**{m: (0.0, 1e9) for m in METRICS}, "network_gbps": (0.0, 1e5), "disk_read_mbps": (0.0, 1e7),
          "disk_write_mbps": (0.0, 1e7), "disk_randread_iops": (0.0, 1e9), "disk_randwrite_iops": (0.0, 1e9),
          "client_ram_gb": (0.0, 1e6), "cpu_score": (0.0, 1e7)}


def _check_range(col: pd.Series) -> None:
    """Finite, and within what the column can hold; ValueError naming the column, the value and its row."""
    import numpy as np

    values = col.to_numpy(dtype=float, na_value=np.nan)
    low, high = COUNTS.get(str(col.name)) or _LIMIT.get(str(col.name)) or (0.0, float(1 << 60))
    bad = ~np.isnan(values) & ~((values >= low) & (values <= high))
    if str(col.name) in COUNTS:
        bad |= ~np.isnan(values) & (values != np.round(values))
    if bad.any():
        row = int(np.argmax(bad))
        kind = "a whole number" if str(col.name) in COUNTS else "a finite number"
        raise ValueError(f"column {col.name}: {values[row]:g} in data row {row + 1} is not {kind} from {low:g} to "
                         f"{high:g} (are the column headers right?)")


def _bool(value: Any) -> bool:
    if isinstance(value, str):  # CSV: True/False as text
        if value.strip().lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"{value!r} is not true or false")
        return value.strip().lower() in ("true", "1")
    return bool(value)


def read_table(path: str | Path) -> pd.DataFrame:
    """A table written by `glmodel export` (CSV or Parquet), typed as ``trial_frame`` types it.

    Raises ConfigError naming the file and what is wrong (unreadable, not an export, a bad value).
    """
    import pandas as pd


    p = Path(path)
    try:
        if p.suffix.lower() in (".parquet", ".pq"):
            frame = pd.read_parquet(p)
            header = [str(c) for c in frame.columns]
        else:
            frame = pd.read_csv(p)
            with p.open(newline="", encoding="utf-8") as fh:  # pandas renames a repeated name to "read.1"
                header = next(csv.reader(fh), [])
    except (OSError, ValueError, UnicodeDecodeError, csv.Error) as exc:
        raise ConfigError(str(p), "file", f"not a readable CSV or Parquet table ({str(exc).splitlines()[0]})") from None
    repeated = sorted({c.strip() for c in header if [h.strip() for h in header].count(c.strip()) > 1})
    if repeated:
        # Which of two 'read' columns holds the figures cannot be told: fitting either could model the wrong one.
        raise ConfigError(str(p), "columns", f"the header names {', '.join(map(repr, repeated))} more than once; "
                          "every column needs its own name")
    missing = [c for c in ("campaign", "run_id", "config_hash") if c not in frame]
    if missing:
        raise ConfigError(str(p), "columns", f"not a `glmodel export` table: no {', '.join(missing)} column")
    if not any(m in frame for m in METRICS):
        raise ConfigError(str(p), "columns", f"no metric column ({', '.join(METRICS)})")
    if "purpose" not in frame:
        frame = _legacy_campaign_columns(frame)
    if "store" not in frame:  # a table exported before rows named their store: the file is where they are from
        frame.insert(0, "store", str(p))
    try:
        return _typed(frame)
    except (ValueError, TypeError) as exc:
        raise ConfigError(str(p), "values", str(exc).splitlines()[0]) from None


def _legacy_campaign_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The cluster, purpose, drift partner and setting columns of a table exported before rows carried them,
    from what its campaigns' names said then (``store.identity.legacy_info``)."""
    import pandas as pd

    infos = {c: legacy_info(c) for c in frame["campaign"].astype(str).unique()}
    names = frame["campaign"].astype(str)
    extra = {"cluster": names.map(lambda c: infos[c].cluster), "purpose": names.map(lambda c: infos[c].purpose.value),
             "again_of": names.map(lambda c: infos[c].again_of)}
    knobs = list(dict.fromkeys(k for i in infos.values() for k, _ in i.setting))
    for knob in knobs:
        extra[f"{SETTING_PREFIX}{knob}"] = names.map(lambda c, k=knob: infos[c].setting_dict().get(k))
    at = list(frame.columns).index("campaign") + 1
    return pd.concat([frame.iloc[:, :at], pd.DataFrame(extra, index=frame.index), frame.iloc[:, at:]], axis=1)


def measured(frame: pd.DataFrame, *, warmups: bool = False, outliers: bool = False) -> pd.DataFrame:
    """The rows of an exported table (which carries the flags) that ``trial_frame`` would give: warm-ups and
    outliers left out unless kept."""
    for flag, keep in (("warmup", warmups), ("outlier", outliers)):
        if not keep and flag in frame:
            frame = frame[~frame[flag].astype(bool)].reset_index(drop=True)
    return frame


def model_frame(store: str | Path, data: Path | None = None, campaigns: Sequence[str] = (), *,
                with_outliers: bool = False, where: Sequence[str] = ()) -> tuple[pd.DataFrame, str]:
    """The measured trials to model, from a store or an exported table, restricted to the campaigns named and
    to the rows matching every ``where`` (``NAME=VALUE``, e.g. ``regime=uncached``); and where they came from.
    Warm-ups never count; outliers only when asked, and ``frame.attrs["flagged"]`` says how many were left out
    and why (for the fit's notes, since the model never sees them)."""
    where_ = list(where)
    if data is not None:
        frame = measured(read_table(data), outliers=True)
        known, source = set(frame["campaign"].astype(str)) if "campaign" in frame else set(), str(data)
    else:
        from .store import open_store  # SQLAlchemy only where a store is read

        with open_store(store, create=False) as st:
            known = {c.name for c in st.campaigns()}
            frame = trial_frame(st, include_outliers=True)
            source = st.where
    missing = [c for c in campaigns if c not in known]
    if missing:
        raise GlmodelError(f"--campaign: no campaign {', '.join(missing)} in {source} "
                           f"(it has {', '.join(sorted(known)) or 'none'})")
    if campaigns and not frame.empty:
        frame = frame[frame["campaign"].isin(campaigns)].reset_index(drop=True)
    if where_:
        frame = restrict(frame, where_)
        source = f"{source} where {', '.join(where_)}"
    note = flagged_note(frame)
    frame = measured(frame, outliers=with_outliers)
    frame.attrs["flagged"] = None if with_outliers else note
    if frame.empty:
        raise GlmodelError(f"no finished trials to fit in {source}")
    return frame, source


def restrict(frame: pd.DataFrame, conditions: Sequence[str]) -> pd.DataFrame:
    """The rows whose column NAME holds VALUE, for every ``NAME=VALUE`` (sizes as 32MB, switches as on/off);
    one line naming the condition when a column is unknown, a value unreadable, or no row is left."""
    import pandas as pd

    keep = pd.Series(True, index=frame.index)
    for cond in conditions:
        name, sep, text = cond.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not name or not text:
            raise GlmodelError(f"--where {cond!r}: give NAME=VALUE, e.g. regime=uncached or sync=osync")
        if name not in frame:
            raise GlmodelError(f"--where {cond!r}: no column {name!r} in the data (it has "
                               f"{', '.join(c for c in frame.columns if not c.startswith('_'))})")
        col = frame[name]
        try:
            if pd.api.types.is_bool_dtype(col):
                value: Any = parse_switch(text)
            elif pd.api.types.is_numeric_dtype(col):
                try:
                    value = float(text)
                except ValueError:  # a size column given with its unit: 32MB
                    value = float(parse_size(text))
            else:
                value = text
        except ValueError as exc:
            raise GlmodelError(f"--where {cond!r}: {exc}") from None
        keep &= col == value
        if not keep.any():
            seen = ", ".join(str(v) for v in sorted(col.dropna().unique(), key=str)[:12])
            raise GlmodelError(f"--where {cond!r}: no row left (values of {name} here: {seen})")
    return frame[keep].reset_index(drop=True)


def export_trials(store: str | Path | Sequence[str | Path], out: Path, fmt: str = "csv", campaign: str | None = None,
                  all_trials: bool = False) -> pd.DataFrame:
    """Write the trials of one store, or of several pooled, as one table (CSV or Parquet); warm-ups, outliers
    and failed runs only with ``all_trials`` (their flag columns say which). Every row names its store and
    cluster, so two stores' campaigns and runs of one name stay apart. Returns what was written."""
    import pandas as pd

    stores = [store] if isinstance(store, (str, Path)) else list(store)
    frames: dict[str, pd.DataFrame] = {}
    for one in stores:
        from .store import open_store

        with open_store(one, create=False) as st:
            if st.where in frames:
                raise GlmodelError(f"--store {one}: given twice (as {st.where}); each store is read once")
            frames[st.where] = trial_frame(st, campaign, include_warmups=all_trials, include_outliers=all_trials,
                                           include_failed=all_trials)
    parts = [f for f in frames.values() if not f.empty]
    if not parts:
        raise GlmodelError(f"no trials to export from {', '.join(map(str, stores))}"
                           + (f" for campaign {campaign}" if campaign else ""))
    # categories of two stores differ: pooled as plain values, then typed again as one table
    frame = parts[0] if len(parts) == 1 else _typed(pd.concat(
        [p.astype({c: object for c in p.columns if isinstance(p[c].dtype, pd.CategoricalDtype)}) for p in parts],
        ignore_index=True))
    if fmt == "csv":
        frame.to_csv(out, index=False)
    else:
        frame.to_parquet(out, index=False)
    return frame
