"""The README's tables recomputed from the shipped CSVs by a few lines of pandas and scipy each, sharing no code with
what made them (no project module computes a figure here), and floors held where a figure needs a refit.

A figure that changes because the code that made it went wrong fails here even when the README is regenerated
from that code: the tuning gains and their intervals come from the raw trials alone. The upgrade proofs' measured
side, recomputed the same way, and the floors their predictions (a refit) must stay within are in
test_upgrade_proof.py, beside the refits they share."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats


ROOT = Path(__file__).resolve().parents[2]
README = " ".join((ROOT / "README.md").read_text().split())

# README row (its first cell, or the words before the figure in a bullet) -> (shipped CSV, metric column).
TUNING = {
    "uncached read, 2 clients (MB/s)": ("tune_search_read", "read"),
    "ls -l of 4000 files (files/s)": ("tune_search_listing", "file_list"),
    "create 8000 files of 16 KB (files/s)": ("tune_search_smallfile", "file_create"),
    "sequential write 4 x 256 MB (MB/s)": ("tune_search_write", "write"),
    "8 KB random write 8 x 64 MB (MB/s)": ("tune_search_randwrite", "random_write"),
    "ls -l of 800 files on 4 bricks (files/s)": ("tune_search_listing_wide", "file_list"),
    "one 480 MB file read by 2 clients, replica 2 (MB/s)": ("tune_search_read_shared", "read"),
    "create 800 files of 16 KB on 4 bricks (files/s)": ("tune_search_smallfile_wide", "file_create"),
    "8 KB O_DIRECT random write, VM image (MB/s)": ("tune_search_randwrite_vm", "random_write"),
    "the same, a new search of up to 5 looks (MB/s)": ("tune_search_randwrite_vm_looks", "random_write"),
}
BULLETS = {  # the round-trip variants, stated in prose
    "gained from a 4 MB write-behind window,": ("tune_search_randwrite_rtt", "random_write"),
    "read-hash-mode 3 measured": ("tune_search_read_rtt", "read"),
    "measured": ("tune_search_randwrite_stretched", "random_write"),
}


FLOOR_SD = 0.0054  # the least run-to-run drift the search assumes where its runs agree (docs/reference.md)


def _runs(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row a run (a configuration in one campaign): its trials' mean log, count and log variance."""
    logs = frame.dropna(subset=[metric]).assign(log=lambda f: np.log(f[metric].astype(float)))
    return logs.groupby(["config_hash", "campaign"])["log"].agg(["mean", "count", "var"]).reset_index()


def _drift(runs: pd.DataFrame) -> tuple[float, float]:
    """(between-run variance, its degrees of freedom; 0 where the floor stands in) by the one-way ANOVA
    estimator over configurations with two runs or more."""
    many = runs.groupby("config_hash").filter(lambda g: len(g) >= 2)
    ss_within = float(((many["count"] - 1) * many["var"]).sum())
    df_within = float((many["count"] - 1).sum())
    ss_between = df_between = n0 = 0.0
    for _, g in many.groupby("config_hash"):
        n, m = g["count"].to_numpy(float), g["mean"].to_numpy(float)
        ss_between += float((n * (m - (n * m).sum() / n.sum()) ** 2).sum())
        df_between += len(g) - 1
        n0 += n.sum() - (n ** 2).sum() / n.sum()
    var = max(0.0, (ss_between / df_between - ss_within / df_within) / (n0 / df_between))
    return (var, df_between) if var > FLOOR_SD ** 2 else (FLOOR_SD ** 2, 0.0)


def _arm_ratio(a: pd.DataFrame, b: pd.DataFrame, drift: tuple[float, float]) -> tuple[float, float, float, float]:
    """(ratio, 90% low, high, one-sided p of no gain): B's mean of run means over A's, each arm's variance its
    drift over its runs plus its trials' pooled within-run part, Satterthwaite's degrees of freedom."""
    parts, dfs = [], []
    for arm in (a, b):
        within = float(((arm["count"] - 1) * arm["var"]).sum() / (arm["count"] - 1).sum())
        parts.append(within * float((1 / arm["count"]).sum()) / len(arm) ** 2)
        dfs.append(float((arm["count"] - 1).sum()))
    between = drift[0] * (1 / len(a) + 1 / len(b))
    if drift[1] > 0:
        parts.append(between)
        dfs.append(drift[1])
        between = 0.0
    var = sum(parts) + between
    dof = sum(parts) ** 2 / sum(p ** 2 / d for p, d in zip(parts, dfs))
    d = float(b["mean"].mean() - a["mean"].mean())
    half = stats.t.ppf(0.95, dof) * math.sqrt(var)
    return math.exp(d), math.exp(d - half), math.exp(d + half), float(stats.t.sf(d / math.sqrt(var), dof))


def confirmed_gain(name: str, metric: str) -> tuple[int, float, float, float, float, float] | None:
    """(runs, ratio, 90% interval, one-sided p, ceiling) of the confirmation on the run footing: the configuration
    the search measured first (the defaults) against the other one its confirmation measured, each over the
    confirmation's runs; the ceiling is the highest upper end of any candidate over all its runs. None where the
    confirmation measured the defaults alone (then the ceiling is read by ``ceiling``)."""
    frame = pd.read_csv(ROOT / "data" / f"{name}.csv")
    first = frame[frame["campaign"] == frame["campaign"].iloc[0]]
    defaults_hash = first.loc[first["run_id"].idxmin(), "config_hash"]
    runs = _runs(frame, metric)
    drift = _drift(runs)
    confirm = runs[runs["campaign"].str.contains(r"\.confirm2?$", regex=True)]
    a, b = confirm[confirm["config_hash"] == defaults_hash], confirm[confirm["config_hash"] != defaults_hash]
    assert a["count"].sum() >= 3, name  # the defaults are always measured again
    if b.empty:
        return None
    assert b["config_hash"].nunique() == 1, name
    ratio, low, high, p = _arm_ratio(a, b, drift)
    return len(frame.drop_duplicates(["campaign", "config_hash"])), ratio, low, high, p, ceiling(name, metric)


def ceiling(name: str, metric: str) -> float:
    """The highest upper end of any candidate's interval against the defaults, each over all its runs."""
    frame = pd.read_csv(ROOT / "data" / f"{name}.csv")
    first = frame[frame["campaign"] == frame["campaign"].iloc[0]]
    defaults_hash = first.loc[first["run_id"].idxmin(), "config_hash"]
    runs = _runs(frame, metric)
    drift = _drift(runs)
    base = runs[runs["config_hash"] == defaults_hash]
    return max(_arm_ratio(base, g, drift)[2] for h, g in runs.groupby("config_hash") if h != defaults_hash
               if (g["count"] > 1).any())


def table_row(first_cell: str) -> list[str]:
    row = next(line for line in (ROOT / "README.md").read_text().splitlines()
               if line.startswith(f"| {first_cell}"))
    return [c.strip() for c in row.strip().strip("|").split("|")]


# The README's tables: the family a "set" is Holm-corrected over (every search of the table's lab condition).
FAMILIES = (
    ("tune_search_read", "tune_search_listing", "tune_search_smallfile", "tune_search_write", "tune_search_randwrite"),
    ("tune_search_listing_wide", "tune_search_read_shared", "tune_search_smallfile_wide", "tune_search_randwrite_vm",
     "tune_search_read_replica3", "tune_search_read_replica3_disks", "tune_search_randwrite_vm_looks"),
    ("tune_search_randwrite_rtt", "tune_search_read_rtt", "tune_search_listing_rtt", "tune_search_smallfile_rtt",
     "tune_search_write_rtt", "tune_search_randwrite_stretched"),
)
METRIC = {"read": "read", "listing": "file_list", "smallfile": "file_create", "write": "write",
          "randwrite": "random_write"}


def verdict(name: str) -> str:
    """set (the gain's p Holm-adjusted over its table at most 0.05), keep (the ceiling below x1.05) or
    undecided."""
    family = next(f for f in FAMILIES if name in f)
    got = {n: confirmed_gain(n, METRIC[n.split("_")[2]]) for n in family}
    p = {n: g[4] if g else 1.0 for n, g in got.items()}
    ranked = sorted(family, key=lambda n: p[n])
    running = 0.0
    for k, n in enumerate(ranked):
        running = max(running, min(1.0, (len(ranked) - k) * p[n]))
        if n == name:
            break
    g = got[name]
    if g is not None and g[2] > 1 and running <= 0.05:
        return "set"
    top = g[5] if g else ceiling(name, METRIC[name.split("_")[2]])
    return "keep" if top < 1.05 else "undecided"


@pytest.mark.parametrize("row", list(TUNING))
def test_a_tuning_row_is_what_its_confirmation_runs_give(row: str) -> None:
    name, metric = TUNING[row]
    cells = table_row(row)
    runs, best, gain, advice = cells[1], cells[2], cells[3], cells[4]
    got = confirmed_gain(name, metric)
    frame = pd.read_csv(ROOT / "data" / f"{name}.csv")
    assert int(runs) == len(frame.drop_duplicates(["campaign", "config_hash"])), row
    assert advice.split(" (was")[0] == verdict(name), row
    if got is None:  # the confirmation measured the defaults alone: nothing to set
        assert (best, gain) == ("defaults", f"none clear, at most x{ceiling(name, metric):.2f}"), row
        return
    _, ratio, low, high, _, _ = got
    assert gain == f"x{ratio:.2f} [{low:.2f}, {high:.2f}]", (row, ratio, low, high)


@pytest.mark.parametrize("words", list(BULLETS))
def test_a_round_trip_variant_s_gain_is_what_its_runs_give(words: str) -> None:
    name, metric = BULLETS[words]
    got = confirmed_gain(name, metric)
    assert got is not None
    _, ratio, low, high, _, _ = got
    stated = f"x{ratio:.2f} [{low:.2f}, {high:.2f}]"
    assert re.search(re.escape(words) + r"[^\[]{0,12}" + re.escape(stated), README), (words, stated)
    said = {"set": "set", "keep": "keep", "undecided": "undecided"}[verdict(name)]
    assert re.search(re.escape(stated) + r"[^;]*" + said, README), (words, said)


def test_every_search_shipped_has_its_defaults_measured_in_its_confirmation() -> None:
    """The recomputation's premise, from the data: each search began with the defaults and measured them again in
    its confirmation, beside at most one other configuration."""
    for path in sorted((ROOT / "data").glob("tune_search_*.csv")):
        frame = pd.read_csv(path)
        confirm = frame[frame["campaign"].str.contains(r"\.confirm2?$", regex=True)]
        first = frame[frame["campaign"] == frame["campaign"].iloc[0]]
        assert first.loc[first["run_id"].idxmin(), "config_hash"] in set(confirm["config_hash"]), path.name
        assert 1 <= confirm["config_hash"].nunique() <= 2, path.name


# New confirmations of searches the data could not decide: (the option whose two levels are the sides, its
# metrics, the hardware setting every campaign was measured at, what data/README concludes)
CONFIRMATIONS = {
    "tune_confirm_listing": ("client_event_threads", ("file_list", "file_create"), {"link": "1gbit"}, "undecided"),
    "tune_confirm_read": ("read_hash_mode", ("read", "write"), {"link": "1gbit", "ram": "384MB"}, "set"),
    "tune_confirm_smallfile": ("metadata_cache", ("file_create", "file_stat"), {"link": "1gbit"}, "set"),
    "tune_confirm_randwrite_rtt": ("write_behind_window", ("random_write", "random_read"),
                                   {"link": "1gbit", "latency": "250us"}, "undecided"),
    "tune_confirm_read_rtt": ("read_hash_mode", ("read", "write"),
                              {"link": "1gbit", "ram": "384MB", "latency": "250us"}, "set"),
    "tune_confirm_randwrite": ("io_thread_count", ("random_write", "random_read"), {"link": "1gbit"}, "worse"),
    "tune_confirm_smallfile_rtt": ("metadata_cache", ("file_create", "file_stat"),
                                   {"link": "1gbit", "latency": "250us"}, "undecided"),
    "tune_confirm_randwrite_stretched": ("write_behind_window", ("random_write", "random_read"),
                                         {"link": "1gbit", "latency": "0.5ms"}, "undecided"),
    "tune_confirm_listing_rtt": ("metadata_cache", ("file_list", "file_create"),
                                 {"link": "1gbit", "latency": "250us"}, "undecided"),
    "tune_confirm_smallfile_wide": ("client_io_threads", ("file_create", "file_stat"),
                                    {"link": "1gbit", "latency": "250us"}, "undecided"),
    "tune_confirm_read_replica3": ("read_hash_mode", ("read", "write"),
                                   {"link": "250mbit", "ram": "256MB", "latency": "250us"}, "undecided"),
    "tune_confirm_read_replica3_disks": ("read_hash_mode", ("read", "write"),
                                         {"link": "1gbit", "disk": "30MB/s", "ram": "256MB", "latency": "250us"},
                                         "undecided"),
}
QUOTED = {"tune_confirm_read", "tune_confirm_read_rtt", "tune_confirm_randwrite", "tune_confirm_smallfile_rtt",
          "tune_confirm_randwrite_rtt", "tune_confirm_randwrite_stretched", "tune_confirm_listing_rtt",
          "tune_confirm_read_replica3", "tune_confirm_read_replica3_disks"}


@pytest.mark.parametrize("name", list(CONFIRMATIONS))
def test_a_new_confirmation_is_what_its_runs_give(name: str) -> None:
    """data/README's new confirmations, from their 24 trials alone: each campaign one run of one side, the sides
    interleaved (each pair of campaigns one of each), every campaign at its plan's hardware setting, Welch's
    interval on the runs' mean logs (scipy's), and the verdict the interval gives its first metric: set where it
    clears 1, keep where it lies within ±5%, worse where it lies below 1 (the candidate loses: keep the defaults
    against it), else undecided."""
    factor, metrics, setting, said = CONFIRMATIONS[name]
    frame = pd.read_csv(ROOT / "data" / f"{name}.csv")
    notes = (ROOT / "data" / "README.md").read_text()
    looks = [str(c).rsplit(".", 1)[1] for c in dict.fromkeys(frame["campaign"])]
    assert sorted(looks) == [f"{s}{k}" for s in "AB" for k in range(1, 5)] and len(frame) == 24
    assert all({looks[i][0], looks[i + 1][0]} == {"A", "B"} for i in range(0, 8, 2)), looks
    assert (frame.groupby("campaign")["run_id"].nunique() == 1).all()
    for knob, value in setting.items():
        assert (frame[f"setting_{knob}"].astype(str) == value).all(), knob
    side = frame["campaign"].astype(str).str.rsplit(".", n=1).str[1].str[0]
    assert frame.groupby(side)[factor].nunique().eq(1).all()
    for k, metric in enumerate(metrics):
        runs = frame.assign(side=side).groupby("campaign").agg(
            side=("side", "first"), log=(metric, lambda v: float(np.log(v).mean())))
        a, b = (runs[runs["side"] == s]["log"].to_numpy() for s in "AB")
        low, high = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.90)
        ratio, low, high = math.exp(b.mean() - a.mean()), math.exp(low), math.exp(high)
        assert f"x{ratio:.2f} [{low:.2f}, {high:.2f}]" in notes, (name, metric, ratio, low, high)
        if name in QUOTED and k == 0:  # the README quotes it beside the search's own row
            assert f"x{ratio:.2f} [{low:.2f}, {high:.2f}], {said}" in " ".join(README.split()), name
        if k == 0:
            verdict = ("set" if low > 1 else "keep" if 0.95 <= low <= high <= 1.05 else "worse" if high < 1
                       else "undecided")
            assert verdict == said, (name, verdict)
