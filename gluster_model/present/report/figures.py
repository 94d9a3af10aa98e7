"""The report's figures (matplotlib, Agg backend): each function draws one PNG and returns its file name."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...model.features import label
from ...units import gluster_size

if TYPE_CHECKING:
    import pandas as pd

    from .tables import ReadTimes


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out: Path, name: str) -> str:
    fig.tight_layout()
    fig.savefig(out / name, dpi=100)
    _plt().close(fig)
    return name


def read_cost(table: pd.DataFrame, out: Path, name: str) -> str:
    """Mean read throughput (MB/s, ± sd) against file size, local and through Gluster (``read_cost_display``)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    x = list(range(len(table)))
    for target, marker in (("local", "o"), ("Gluster", "s")):
        if f"{target} MB/s" in table:
            ax.errorbar(x, table[f"{target} MB/s"], yerr=table[f"{target} sd MB/s"], marker=marker,
                        capsize=4, label=target)
    ax.set_xticks(x, list(table["file size"]))
    ax.set_xlabel("file size")
    ax.set_ylabel("read throughput (MB/s)")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("Read cost: local filesystem vs Gluster mount")
    return _save(fig, out, name)


def read_times(groups: Sequence[ReadTimes], out: Path, name: str) -> str:
    """Histogram of per-reader read times per (readers, buffer), with the detected modes marked."""
    plt = _plt()
    n = max(len(groups), 1)
    cols = min(n, 2)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols, 3.2 * rows), squeeze=False)
    for ax, g in zip(axes.ravel(), groups):
        ax.hist(g.times, bins=min(40, max(8, len(g.times) // 3)), color="#4c72b0", alpha=0.8)
        for m in g.modes:
            ax.axvline(m.mean, color="#c44e52", linestyle="--")
        ax.set_title(f"{g.readers} reader(s), {gluster_size(g.block)} buffer: {len(g.modes)} mode(s)", fontsize=9)
        ax.set_xlabel("read time (s)")
        ax.set_ylabel("readers")
    for ax in axes.ravel()[len(groups):]:
        ax.axis("off")
    return _save(fig, out, name)


def sweep(curves: dict[str, list[tuple[int, float]]], plateaus: dict[str, float | None], out: Path, name: str) -> str:
    """Throughput against block size (log-log), one line per curve, plateau points marked."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, pts in curves.items():
        xs, ys = zip(*sorted(pts)) if pts else ((), ())
        line = ax.plot(xs, ys, marker="o", label=label)[0]
        p = plateaus.get(label)
        if p is not None:
            ax.plot([p], [dict(pts)[int(p)]], marker="*", markersize=14, color=line.get_color())
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("block size (bytes)")
    ax.set_ylabel("throughput (MB/s)")
    ax.legend(fontsize=8)
    ax.set_title("Block-size sweep (★ = plateau: under 5% gain per doubling)")
    return _save(fig, out, name)


def replication(table: pd.DataFrame, out: Path, name: str) -> str:
    """Write time against copies, one line per file size."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for size, sel in table.groupby("file_size", sort=False):
        if "write_ms" in sel:
            ax.plot(sel["copies"], sel["write_ms"], marker="o", label=str(size))
    ax.set_xlabel("copies")
    ax.set_ylabel("write time (ms)")
    ax.set_xticks(sorted(table["copies"].unique()))
    ax.legend(title="file size")
    ax.set_title("Replication: write time per file")
    return _save(fig, out, name)


def importance(rows: list[dict[str, Any]], title: str, out: Path, name: str) -> str:
    """Horizontal bars of S_i/ΣS_i with their bootstrap intervals."""
    plt = _plt()
    rows = sorted(rows, key=lambda r: r.get("vi") or 0.0)
    fig, ax = plt.subplots(figsize=(6, 0.45 * len(rows) + 1.2))
    vi = [float(r.get("vi") or 0.0) for r in rows]
    lo = [max(0.0, v - float(r["vi_low"] if r.get("vi_low") is not None else v)) for v, r in zip(vi, rows)]
    hi = [max(0.0, float(r["vi_high"] if r.get("vi_high") is not None else v) - v) for v, r in zip(vi, rows)]

    ax.barh([label(r["feature"]) for r in rows], vi, xerr=[lo, hi], color="#55a868", capsize=3)
    ax.set_xlabel("share of explained variance (S_i / ΣS_i)")
    ax.set_title(title, fontsize=10)
    return _save(fig, out, name)


def _scatter(x: Sequence[float], y: Sequence[float], labels: tuple[str, str], reference: str, title: str, out: Path,
             name: str, size: tuple[float, float]) -> str:
    """Points with a dashed reference: the diagonal (``reference='diagonal'``) or the zero line."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=size)
    ax.scatter(x, y, s=14, alpha=0.7)
    if reference == "diagonal":
        lim = [min(min(x), min(y)), max(max(x), max(y))]
        ax.plot(lim, lim, color="grey", linestyle="--")
    else:
        ax.axhline(0, color="grey", linestyle="--")
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    ax.set_title(title, fontsize=10)
    return _save(fig, out, name)


def predicted_measured(y: Sequence[float], yhat: Sequence[float], title: str, out: Path, name: str) -> str:
    return _scatter(y, yhat, ("measured (MB/s)", "predicted (MB/s)"), "diagonal", title, out, name, (4.5, 4.5))


def residuals(y: Sequence[float], yhat: Sequence[float], title: str, out: Path, name: str) -> str:
    return _scatter(yhat, [a - b for a, b in zip(y, yhat)], ("predicted (MB/s)", "measured - predicted (MB/s)"),
                    "zero", title, out, name, (5, 3.5))


def block_size_sync(frame: pd.DataFrame, out: Path, name: str) -> str | None:
    """Throughput against block size with O_SYNC on and off (mean over runs), per test."""
    metrics = [m for m in ("write", "read") if m in frame]
    sel = frame[frame["sync"].astype(str).isin(["none", "osync"])] if "sync" in frame else frame.iloc[0:0]
    if sel.empty or not metrics or sel["record_size"].nunique() < 2:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for metric in metrics:
        for sync, part in sel.groupby(sel["sync"].astype(str)):
            pts = part.groupby("record_size")[metric].mean().dropna()
            if not pts.empty:
                ax.plot(pts.index, pts.values, marker="o",
                        label=f"{metric}, O_SYNC {'on' if sync == 'osync' else 'off'}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("block (record) size (bytes)")
    ax.set_ylabel("throughput (MB/s)")
    ax.legend(fontsize=8)
    modes = set(sel["sync"].astype(str))
    ax.set_title("Throughput against block size, " + ("O_SYNC on and off" if modes == {"none", "osync"}
                                                      else f"O_SYNC {'on' if 'osync' in modes else 'off'} only"))
    return _save(fig, out, name)


def design_curves(results: Sequence[Any], out: Path, name: str) -> str:
    """Held-out R² (left) and top-predictor recovery (right) against runs, one line per strategy, a row per
    metric (``results``: DesignSize curves)."""
    plt = _plt()
    metrics = list(dict.fromkeys(r.metric for r in results))
    fig, axes = plt.subplots(len(metrics), 2, figsize=(10, 3.4 * len(metrics)), squeeze=False)
    for row, metric in zip(axes, metrics):
        for r in (r for r in results if r.metric == metric):
            n = [p.n for p in r.points]
            row[0].plot(n, [p.r2_median for p in r.points], marker="o", label=f"{r.strategy} (needs "
                        f"{r.needed if r.needed is not None else '>' + str(max(n))})")
            row[1].plot(n, [p.top_share for p in r.points], marker="o", label=r.strategy)
            target = r.full_cv_r2 - r.tolerance
        row[0].axhline(target, color="grey", linestyle="--", linewidth=1, label="criterion")
        row[0].set(title=f"{metric}: median held-out R²", xlabel="runs (configurations)", ylim=(0, 1))
        row[1].set(title=f"{metric}: top predictor found", xlabel="runs (configurations)", ylim=(0, 1.05))
        for ax in row:
            ax.set_xscale("log")
            ax.minorticks_off()
            ax.set_xticks(n, [str(v) for v in n], fontsize=8)
        row[0].legend(fontsize=8)
        row[1].legend(fontsize=8)
    return _save(fig, out, name)
