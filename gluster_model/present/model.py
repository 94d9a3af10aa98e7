"""Rich tables for `glmodel fit` (model comparison, the MLR's coefficients, diagnostics, importance) and for
`glmodel design-size`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..model.design_size import DesignSize
from ..model.features import label, readable
from ..model.fit import MetricFit
from ..model.artifact import metric_report


def _f(value: float | None, fmt: str = ".3f") -> str:
    return "–" if value is None or value != value else format(value, fmt)


def comparison_caption(report: dict[str, Any]) -> str:
    """How the comparison's figures were made, from the report itself (what CV held out, how many groups)."""
    cv = next((s["cv"] for s in report["comparison"] if s.get("cv")), None)
    if cv is None:
        held = "CV: not possible (fewer than 3 groups)"
    else:
        by = cv.get("grouped_by", "configuration")
        held = (f"CV: grouped {cv['folds']}-fold holding out whole {by}s ({cv.get('groups') or '?'} of them; a "
                f"{by} never on both sides), mean ± sd over {cv.get('repeats', '?')} seeds")
        if any(s.get("cv_select") for s in report["comparison"]):
            held += (" other than those the model was chosen on" if cv["folds"] < (cv.get("groups") or 0)
                     else "; leave-one-out, so chosen on the same splits")
    return (f"{held}; MAPE on CV (* on 75/25); adj R² on the scale each model was fitted on (log: log MB/s); "
            "PI: share of 75/25 held-out trials inside the prediction interval")


def comparison_rows(report: dict[str, Any]) -> list[dict[str, str]]:
    """The model comparison as text cells, from a metric's report as the model file holds it (``metric_report``),
    so the terminal and the report show the same figures under the same names."""
    scores = report["comparison"]
    level = (scores[0].get("holdout") or {}).get("level", 0.9) if scores else 0.9
    rows = []
    for s in scores:
        cv, ho = s.get("cv") or {}, s.get("holdout") or {}
        rows.append({"model": s["model"], "k": str(s["n_params"] - 1) if s.get("n_params") else "–",
                     "adj R²": _f(s.get("adj_r2")) + (" (log)" if s.get("adj_r2_scale", "").startswith("log")
                                                       and s.get("adj_r2") is not None else ""),
                     "75/25 R²": _f(ho.get("r2")),
                     "CV R²": _f(cv.get("r2_mean")) if cv else "–", "± sd": _f(cv.get("r2_sd")) if cv else "–",
                     "MAPE %": _f(cv.get("mape_mean"), ".1f") if cv else _f(ho.get("mape"), ".1f") + "*",
                     f"PI {level:.0%}": _f(ho.get("coverage"), ".0%"),
                     "chosen": "✓" if s["model"] == report["selected"] else ""})
    return rows


def comparison_table(f: MetricFit) -> Any:
    from rich.table import Table


    t = Table(title=f"{f.metric}: models on the same data ({f.n_rows} trials, {f.n_configs} configurations)",
              title_justify="left")
    rows = comparison_rows(metric_report(f))
    for col in rows[0]:
        t.add_column(col, justify="left" if col in ("model", "chosen") else "right")
    for r in rows:
        t.add_row(*r.values())
    t.caption = comparison_caption(metric_report(f))
    return t


def coefficient_table(f: MetricFit) -> Any:
    from rich.table import Table

    t = Table(title=f"{f.metric}: the study's MLR (OLS)", title_justify="left")
    for col in ("term", "estimate", "std err", "t", "p", "95% CI", "HC3 se", "HC3 p", "std β"):
        t.add_column(col, justify="left" if col == "term" else "right")
    for r in f.coefficients:
        t.add_row(readable(r["term"]), f"{r['estimate']:.4g}", f"{r['std_error']:.3g}", _f(r["t"], ".2f"), _f(r["p"], ".3g"),
                  f"[{r['ci_low']:.4g}, {r['ci_high']:.4g}]", _f(r.get("std_error_hc3"), ".3g"),
                  _f(r.get("p_hc3"), ".3g"), _f(r["standardized"]))
    bp = f.diagnostics.breusch_pagan_p
    t.caption = ("HC3: heteroscedasticity-robust; " + (
        f"Breusch–Pagan rejects constant variance (p = {bp:.2g}): read p from HC3" if bp is not None and bp < 0.05
        else "the classic and robust p agree when the variance is constant"))
    return t


def importance_table(f: MetricFit, model: str) -> Any:
    from rich.table import Table

    t = Table(title=f"{f.metric}: predictor importance, {model} model (Sobol', over the measured values)",
              title_justify="left")
    imps = sorted(f.importance[model], key=lambda i: -i.vi)
    analytic = any(i.analytic_vi is not None for i in imps)
    explained = f.explained.get(model)
    for col in ("input", "VI", "boot 95%", *(["of measured"] if explained is not None else []), "S1", "S_T",
                *(["analytic"] if analytic else [])):
        t.add_column(col, justify="left" if col == "input" else "right")
    for i in imps:
        ci = f"[{i.vi_low:.3f}, {i.vi_high:.3f}]" if i.vi_low is not None and i.vi_high is not None else "–"
        t.add_row(label(i.feature), f"{i.vi:.3f}", ci, *([f"{i.vi * explained:.0%}"] if explained is not None else []),
                  f"{i.s1:.3f}±{i.s1_conf:.2f}", f"{i.st:.3f}±{i.st_conf:.2f}", *([_f(i.analytic_vi)] if analytic else []))
    if explained is not None:
        t.add_row("unexplained (1 − CV R²)", "", "", f"{1 - explained:.0%}", "", "", *([""] if analytic else []))
    t.caption = (f"Σ S1 = {sum(i.s1 for i in imps):.3f} (1 for an additive model; less means interactions); "
                 "inputs drawn from their measured values, the volume's shape only as it can be built"
                 + ("; of measured: VI × the share of the measured variance the model explains out of sample"
                    if explained is not None else ""))
    return t


def replication_lines(report: dict[str, Any]) -> list[str]:
    """Run-to-run noise and each linear model's lack-of-fit test, from a metric's report; nothing without
    replicated configurations."""
    rep = report.get("replication")
    if not rep:
        return []
    lines = [f"run-to-run noise: CV {rep['cv_percent']:.1f}% ({rep['runs']} runs of {rep['configurations']} "
             "configurations measured more than once)"]
    for t in rep["tests"]:
        verdict = ("the model misses more than the noise" if t["p"] is not None and t["p"] < 0.05 else
                   "no evidence of lack of fit beyond the noise") if t["p"] is not None else "no df left to test"
        test = f"F = {t['f']:.2f} on ({t['lof_df']}, {t['pure_df']}) df, p = {t['p']:.2g}" if t["p"] is not None \
            else "F not defined"
        lines.append(f"{t['model']} ({t['scale']}): pure error {t['pure_share']:.0%} of the residual, lack of fit "
                     f"{1 - t['pure_share']:.0%}; {test}: {verdict}")
    return lines


def print_fits(console: Any, fits: Sequence[MetricFit], skipped: Sequence[str]) -> None:
    for f in fits:
        console.print(comparison_table(f))
        console.print(coefficient_table(f))
        for finding in f.diagnostics.findings:
            console.print(f"  [bold]{f.metric}[/]: {readable(finding, prose=True)}")
        if not f.diagnostics.findings and f.diagnostics.reset_p is not None:
            console.print(f"  {f.metric}: RESET p = {f.diagnostics.reset_p:.2g}, Breusch–Pagan p = "
                          f"{_f(f.diagnostics.breusch_pagan_p, '.2g')}: no evidence against the linear model")

        for line in replication_lines(metric_report(f)):
            console.print(f"  {f.metric}: {line}", highlight=False)
        for model in f.importance:
            console.print(importance_table(f, model))
        for note in f.notes:
            console.print(f"  note: {readable(note, prose=True)}", highlight=False)
        console.print()
    for line in skipped:
        console.print(f"not fitted: {line}", highlight=False)


def design_size_table(d: DesignSize) -> Any:
    from rich.table import Table

    vi = ", ".join(f"{f} {v:.2f}" for f, v in sorted(d.full_vi.items(), key=lambda kv: -kv[1])[:3])
    t = Table(title=f"{d.metric}: MLR on {d.strategy} designs from the {d.configs} configurations (whole grid: CV R² "
                    f"{_f(d.full_cv_r2)}; VI {vi})", title_justify="left")
    for col in ("n", "fitted", "held-out R² median", "p10", f"top = {d.top}", "VI rank corr"):
        t.add_column(col, justify="right")
    for p in d.points:
        t.add_row(str(p.n), f"{p.fitted}/{p.subsets}", _f(p.r2_median), _f(p.r2_p10), _f(p.top_share, ".0%"),
                  _f(p.rank_corr, ".2f"))
    t.caption = ("n: configurations in a subset; held-out R²: 1 − MSE on the configurations it left out / the whole "
                 "grid's variance; a subset where some feature did not vary cannot be fitted")
    return t


def print_design_size(console: Any, results: Sequence[DesignSize], where: str) -> None:
    for d in results:
        console.print(design_size_table(d))
        if d.needed is None:
            console.print(f"  {d.metric}, {d.strategy}: no size tried met the criterion (median held-out R² within "
                          f"{d.tolerance:.2f} of {_f(d.full_cv_r2)} and the top predictor in ≥{d.top_share:.0%} of "
                          "subsets, at that size and every larger one)", highlight=False)
        else:
            console.print(f"  {d.metric}, {d.strategy}: {d.needed} of {d.configs} configurations suffice: from there on the median "
                          f"held-out R² is within {d.tolerance:.2f} of the whole grid's {_f(d.full_cv_r2)} and "
                          f"{d.top} ranks first in ≥{d.top_share:.0%} of subsets", highlight=False)
    by_metric: dict[str, list[DesignSize]] = {}
    for d in results:
        by_metric.setdefault(d.metric, []).append(d)
    for metric, ds in by_metric.items():
        if len(ds) > 1:
            console.print(f"runs needed for {metric}: " + ", ".join(
                f"{d.strategy} {d.needed if d.needed is not None else '–'}" for d in ds) +
                f" (of {ds[0].configs})", highlight=False)
    console.print(f"data: {where}", highlight=False)


def design_figure(results: Any, figure: Path) -> None:
    """design-size's curves drawn to ``figure`` (a PNG the caller's path check allowed)."""
    from .report.figures import design_curves

    design_curves(results, figure.parent, figure.name)
