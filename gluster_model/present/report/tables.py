"""The methodology studies' tables, computed from stored trials (pure: a long frame in, DataFrames out).

The input is ``study_trials``' long frame: one row per (trial, metric) with the run's features. Only measured
trials count (warm-ups and rejected outliers are left out); rejected trials are counted where a study reports
them. Throughputs are stored in kB/s, per-reader times in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...stats.summary import Mode, detect_modes, overhead_percent, plateau, summarize
from ...units import gluster_size

if TYPE_CHECKING:
    import pandas as pd


def measured(df: pd.DataFrame) -> pd.DataFrame:
    """Measured, kept trials of finished runs."""
    return df[(~df["warmup"]) & (~df["outlier"]) & (df["trial_status"] == "ok") & (df["run_status"] == "done")]


def size_label(n: Any) -> str:
    return gluster_size(int(n))


def read_cost_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per file size: mean and sd of read throughput (KB/s) from the local disk and the Gluster mount, their
    3-sigma bands, the trials the rule rejected, and local - distributed."""
    import pandas as pd

    reads = df[df["metric"] == "read"]
    kept = measured(reads)
    rows = []
    for size in sorted(kept["file_size"].unique()):
        row: dict[str, Any] = {"file_size": size_label(size)}
        means = {}
        for target in ("local", "gluster"):
            sel = kept[(kept["file_size"] == size) & (kept["target"] == target)]["value"]
            rejected = reads[(reads["file_size"] == size) & (reads["target"] == target) & reads["outlier"]]
            if sel.empty:
                continue
            s = summarize(list(sel))
            means[target] = s.mean
            row.update({f"{target}_n": s.n, f"{target}_mean_kBps": s.mean, f"{target}_sd_kBps": s.sd,
                        f"{target}_3sigma_low": s.low, f"{target}_3sigma_high": s.high,
                        f"{target}_rejected": int(len(rejected))})
        if len(means) == 2:
            row["local_minus_gluster_kBps"] = means["local"] - means["gluster"]
            row["gluster_pct_of_local"] = 100 * means["gluster"] / means["local"] if means["local"] else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def copies(layout: str, replica: Any) -> int:
    """Copies of each file: a replicate volume's replica count, else one."""
    return int(replica) if layout == "replicate" and replica == replica and replica is not None else 1


def replication_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per file size and number of copies: write and read time (ms, from each trial's throughput and file size),
    throughput, overhead in % against one copy; and the read with one replica's brick stopped against the read
    with all up."""
    import pandas as pd

    kept = measured(df[df["metric"].isin(["write", "read"])]).copy()
    kept["copies"] = [copies(lay, rep) for lay, rep in zip(kept["layout"], kept["replica"])]
    kept["ms"] = kept["trial_file_size"] / (kept["value"] * 1024) * 1000
    rows = []

    def mean_ms(sel: pd.DataFrame) -> float | None:
        return float(sel["ms"].mean()) if not sel.empty else None

    for size in sorted(kept["file_size"].unique()):
        at = kept[kept["file_size"] == size]
        up = at[~at["degraded"]]
        base_w = mean_ms(up[(up["copies"] == 1) & (up["metric"] == "write")])
        base_r = mean_ms(up[(up["copies"] == 1) & (up["metric"] == "read")])
        for k in sorted(at["copies"].unique()):
            w = up[(up["copies"] == k) & (up["metric"] == "write")]
            r = up[(up["copies"] == k) & (up["metric"] == "read")]
            d = at[(at["copies"] == k) & at["degraded"] & (at["metric"] == "read")]
            row: dict[str, Any] = {"file_size": size_label(size), "copies": int(k)}
            if not w.empty:
                row.update(write_ms=mean_ms(w), write_ms_sd=float(w["ms"].std(ddof=1)) if len(w) > 1 else 0.0,
                           write_MBps=float(w["value"].mean()) / 1024,
                           write_overhead_pct=overhead_percent(mean_ms(w) or 0.0, base_w) if base_w else None)
            if not r.empty:
                row.update(read_ms=mean_ms(r), read_MBps=float(r["value"].mean()) / 1024,
                           read_overhead_pct=overhead_percent(mean_ms(r) or 0.0, base_r) if base_r else None)
            if not d.empty and not r.empty:
                row.update(degraded_read_ms=mean_ms(d),
                           degraded_overhead_pct=overhead_percent(mean_ms(d) or 0.0, mean_ms(r) or 1.0))
            rows.append(row)
    return pd.DataFrame(rows)


@dataclass
class ReadTimes:
    readers: int
    block: int
    times: list[float]
    modes: list[Mode]


def reader_times(df: pd.DataFrame, seed: int = 0) -> list[ReadTimes]:
    """Per number of readers and buffer size: every reader's read time (s) over the measured trials, and the
    modes of their distribution."""
    kept = measured(df[df["metric"].str.startswith("read_time.")])
    out = []
    for (readers, block), sel in kept.groupby(["threads", "record_size"], sort=True):
        times = [float(v) for v in sel["value"]]
        out.append(ReadTimes(int(readers), int(block), times, detect_modes(times, seed=seed)))
    return out


def concurrent_table(groups: list[ReadTimes]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for g in groups:
        s = summarize(g.times)
        rows.append({"readers": g.readers, "buffer": size_label(g.block), "read_times": s.n, "mean_s": s.mean,
                     "sd_s": s.sd, "modes": len(g.modes),
                     "mode_means_s (weight)": "; ".join(f"{m.mean:.4f} ({m.weight:.0%})" for m in g.modes)})
    return pd.DataFrame(rows)


def sweep_curves(df: pd.DataFrame) -> dict[str, list[tuple[int, float]]]:
    """Throughput curves (block size, mean MB/s) per engine, cache and test, e.g. 'dd read, cache dropped'."""
    kept = measured(df[df["metric"].isin(["write", "read"])])
    out: dict[str, list[tuple[int, float]]] = {}
    for (engine, cache, metric), sel in kept.groupby(["engine", "cache", "metric"], sort=True, dropna=False):
        name = f"{engine} {metric}, cache {cache if cache == cache and cache else 'per protocol'}"
        pts = sel.groupby("record_size")["value"].mean()
        out[name] = [(int(b), float(v) / 1024) for b, v in pts.items()]
    return out


def sweep_table(curves: dict[str, list[tuple[int, float]]]) -> pd.DataFrame:
    """Block sizes down, one column per curve (MB/s), and a last row naming where each curve plateaus."""
    import pandas as pd

    blocks = sorted({b for pts in curves.values() for b, _ in pts})
    rows = []
    for b in blocks:
        row: dict[str, Any] = {"block_size": size_label(b)}
        for name, pts in curves.items():
            row[name] = dict(pts).get(b)
        rows.append(row)
    row = {"block_size": "plateau from"}
    for name, pts in curves.items():
        p = plateau(pts)
        row[name] = size_label(p) if p is not None else "not reached"
    rows.append(row)
    return pd.DataFrame(rows)


def config_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per run: its features and the mean MB/s of each test (the reference studies' raw table)."""
    import pandas as pd

    kept = measured(df[df["unit"] == "kB/s"])
    if kept.empty:
        return pd.DataFrame()
    wide = kept.pivot_table(index=["run_id", "label"], columns="metric", values="value", aggfunc="mean") / 1024
    wide = wide.reset_index().drop(columns=["run_id"])
    wide.columns.name = None
    return wide


def read_cost_display(t: pd.DataFrame) -> pd.DataFrame:
    """The read-cost table for people: MB/s (the study measured KB/s), names in words, the 3-sigma band left to
    the store (``glmodel runs show``), so the table fits a page."""
    import pandas as pd

    out = pd.DataFrame({"file size": t["file_size"]})
    for target, name in (("local", "local"), ("gluster", "Gluster")):
        if f"{target}_mean_kBps" in t:
            out[f"{name} MB/s"] = t[f"{target}_mean_kBps"] / 1024
            out[f"{name} sd MB/s"] = t[f"{target}_sd_kBps"] / 1024
            out[f"{name} trials (rejected)"] = [f"{n} ({r})" for n, r in zip(t[f"{target}_n"], t[f"{target}_rejected"])]
    if "local_minus_gluster_kBps" in t:
        out["local − Gluster MB/s"] = t["local_minus_gluster_kBps"] / 1024
        out["Gluster % of local"] = t["gluster_pct_of_local"]
    return out
