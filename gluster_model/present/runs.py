"""The ``runs`` commands' output: a table of runs, an adaptive campaign's rounds, one run's trials."""

from __future__ import annotations

import json
from typing import Any

from ..bench.metrics import show_stored
from ..plan.factors import show_features
from ..store.views import DesignLog, RunDetail, RunList
from ..text import printable
from ..units import gluster_size


def runs_table(runs: RunList, title: str) -> Any:
    from rich.table import Table

    table = Table(title=title)
    for col in ("id", "campaign", "status", "trials", "regime", "features", "error"):
        table.add_column(col)
    for r in runs.rows:
        err = f"{r.error_host or ''}: {r.error}" if r.error else ""
        table.add_row(str(r.id), r.campaign, r.status.value + (" (unstable)" if r.unstable else ""),
                      str(runs.trials[r.id]), r.regime or "", show_features(r.features), err)
    return table


def design_lines(log: DesignLog) -> list[str]:
    out = []
    for e in log.entries:
        if e.config_hash is None:
            f = e.figures
            loo = f.get("loo_r2")
            out.append(f"round {e.round}: {f.get('runs')} run(s), LOO R² {'–' if loo is None else f'{loo:.3f}'}; "
                       f"{e.reason}")
        else:
            out.append(f"  round {e.round} runs {log.labels.get(e.config_hash, e.config_hash[:12])}: {e.reason}")
    return out


def run_lines(detail: RunDetail) -> list[str]:
    run = detail.run
    out = [f"run {run.id} of {run.campaign}: {run.status.value}, attempt {run.attempts}, "
           f"regime {run.regime}" + (", UNSTABLE" if run.unstable else "")]
    if run.error:
        out.append(f"  error on {run.error_host}: {run.error}")
        if run.error_command:
            out.append(f"  command: {run.error_command}")
    out.append("  config: " + json.dumps(run.config, sort_keys=True))
    for t in detail.trials:
        flags = ",".join(f for f, on in (("warm-up", t.warmup), ("outlier", t.outlier)) if on)
        figs = "  ".join(show_stored(m.metric, m.value, m.unit) for m in t.measurements)
        size = gluster_size(t.file_size) if t.file_size else "?"
        out.append(f"  trial {t.idx:3d} {t.status:6s} {t.seconds:6.1f}s {size:>7s} {flags:16s} {figs}"
                   + (f"  error: {t.error}" if t.error else ""))
        disturbed = (t.context or {}).get("disturbed")
        if t.flagged_because:
            out.append(f"            flagged: {printable(t.flagged_because)}")
        elif disturbed:
            out.append("            disturbed: " + printable("; ".join(disturbed)))
    if detail.raw is not None:
        out.append(detail.raw)
    return out

