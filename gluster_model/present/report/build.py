"""`glmodel report`: a static HTML report (figures as PNG files beside it) and a Markdown summary, from a store
and optionally a model file. Nothing is fetched from the network: styles are inline, images are local files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import GlmodelError
from ...model.features import label, readable
from ..model import comparison_caption, comparison_rows, replication_lines
from ...store.identity import Purpose, StoredCampaign
from ...store.store import Store
from ...text import printable
from . import figures, tables
from .data import CampaignView, baselines, campaigns, study_trials
from .document import Doc, to_html, to_markdown
from ...model.features import with_derived
from ...model.fit import rows_for
from ...stats.summary import plateau
from ...dataset import read_table, trial_frame
from .decision import add_answer, add_limits, context_rows, settings_count

if TYPE_CHECKING:
    import pandas as pd

    from ...api import Answered

    from ...model.artifact import ModelFile

STUDY_TITLES = {"read_cost": "Read cost, local vs distributed", "concurrent_reads": "Concurrent reads",
                "block_size_sweep": "Block-size sweep", "replication_overhead": "Replication overhead",
                "study_hardware": "The reference study's hardware model",
                "study_gluster": "The reference study's Gluster model"}


@dataclass
class Written:
    html: Path
    markdown: Path
    images: list[Path]
    sections: list[str]


# -- sections ---------------------------------------------------------------------------------------------------

def _since_last_time(doc: Doc, store: Store, views: list[CampaignView]) -> None:
    """The latest campaign of each plan and cluster against the one before it (`glmodel compare --against
    last`), where the store holds an earlier one: what got slower or faster since then."""
    import pandas as pd

    from ...compare import MismatchError
    from ...compare.sides import history, read_side
    from ...compare.verdicts import judge
    from ..compare import headline

    shown = {v.name for v in views}
    latest: dict[tuple[str, str], StoredCampaign] = {}
    for c in store.campaigns():
        if c.name in shown and c.purpose is not Purpose.VERIFICATION and not c.again_of:
            latest[(c.plan_name, c.cluster_name)] = c  # oldest first: the last one stays
    done = False
    for current in latest.values():
        try:
            result = judge(read_side(store, history(store, current, 1)), read_side(store, [current]))
        except MismatchError:
            continue  # no earlier campaign of the plan, or nothing in common to compare
        if not done:
            doc.h2("Since last time", "since-last-time")
            doc.p("The latest campaign of each plan against the one before it on the same cluster, as `glmodel "
                  "compare --against last` judges it: each configuration slower or faster beyond the margin, the "
                  "same within it, or undecided.")
            done = True
        doc.p(headline(result))
        doc.table(pd.DataFrame([{"verdict": r.verdict, "metric": r.metric, "configuration": r.config,
                                 "before": round(r.mean_a, 1), "after": round(r.mean_b, 1),
                                 "change %": round((r.ratio.ratio - 1) * 100, 1),
                                 "interval %": f"{(r.ratio.low - 1) * 100:+.1f} to {(r.ratio.high - 1) * 100:+.1f}"}
                                for r in result.rows]), f"{current.name} against the campaign before it")


def _read_cost_takeaway(t: pd.DataFrame) -> str:
    """The read-cost study in one plain sentence: what reading through Gluster costs against the local disk."""
    if "gluster_pct_of_local" not in t or t["gluster_pct_of_local"].isna().all():
        return "Only one side (local or Gluster) was measured, so the cost of reading through Gluster is not known."
    pct = t.dropna(subset=["gluster_pct_of_local"])
    low, high = pct["gluster_pct_of_local"].min(), pct["gluster_pct_of_local"].max()
    return (f"In short: reading through the Gluster mount gave {low:.0f}-{high:.0f}% of the local disk's "
            f"throughput over the file sizes measured (the rest is the network and the client's FUSE path). These "
            "reads are re-reads of a file just written, so both sides are served from the page cache where the "
            "file fits in RAM: the figure is the cost of the path, not of the disks.")


def _campaign_section(doc: Doc, store: Store, views: list[CampaignView]) -> None:
    import pandas as pd

    doc.h2("Campaigns and hosts", "campaigns")
    doc.table(pd.DataFrame([{"campaign": v.name, "study": v.study or "", "cluster": v.cluster,
                             "runs done": v.runs.get("done", 0), "runs failed": v.runs.get("failed", 0),
                             "trials": v.trials, "glmodel": v.version, "created": str(v.created)[:19]}
                            for v in views]), "campaigns in the store")
    hosts: dict[str, dict[str, Any]] = {}
    for v in views:
        for h in v.hosts:
            f = h.facts
            hosts.setdefault(h.address, {"host": h.address, "name": h.name, "roles": "+".join(h.roles),
                                         "cpus": f.cpus, "RAM (GiB)": (f.ram_bytes or 0) / 2**30,
                                         "kernel": f.kernel, "gluster": f.gluster_version,
                                         "NIC (Mbit/s)": f.nic_speed_mbps})
    doc.table(pd.DataFrame(list(hosts.values())), "hosts (facts gathered at the start of each campaign)")
    base = baselines(store, [v.name for v in views])
    if not base.empty:
        net = base[(base["kind"] == "network") & (base["figure_unit"] == "Gbit/s")]
        if not net.empty:
            doc.table(net.pivot_table(index=["campaign", "host", "target"], columns="test", values="figure",
                                      aggfunc="mean").reset_index(), "measured network baseline (iperf3, Gbit/s)")
        rtt = base[(base["kind"] == "network") & (base["test"] == "rtt")]
        if not rtt.empty:
            doc.table(rtt.pivot_table(index=["campaign", "host"], columns="target", values="figure",
                                      aggfunc="mean").reset_index(), "measured round trips (TCP handshake, ms)")
        disk = base[(base["kind"] == "disk") & (base["figure_unit"] == "MB/s")]
        if not disk.empty:
            doc.table(disk.pivot_table(index=["campaign", "host", "target"], columns="test", values="figure",
                                       aggfunc="mean").reset_index(), "measured disk baseline (fio, MB/s)")


def _study_section(doc: Doc, store: Store, view: CampaignView, out: Path, n: int) -> None:
    assert view.study is not None
    df = study_trials(store, view.name)
    doc.h2(f"{STUDY_TITLES[view.study]}: {view.name}", f"study-{n}")
    if view.description:
        doc.p(view.description)
    if df.empty:
        doc.p("No trials stored yet.")
        return
    if view.study == "read_cost":
        raw = tables.read_cost_table(df)
        doc.p(_read_cost_takeaway(raw))
        t = tables.read_cost_display(raw)
        doc.table(t, "read throughput per file size (MB/s): mean and sd of the trials the 3-sigma rule kept")
        doc.img(figures.read_cost(t, out, f"study{n}_read_cost.png"), "read throughput against file size")
    elif view.study == "replication_overhead":
        t = tables.replication_table(df)
        doc.table(t, "write/read time per file (ms) and overhead against one copy (%); degraded: one brick down")
        doc.img(figures.replication(t, out, f"study{n}_replication.png"), "write time against copies")
    elif view.study == "concurrent_reads":
        groups = tables.reader_times(df)
        doc.table(tables.concurrent_table(groups), "per-reader read times (s) and their modes (Gaussian mixture, "
                                                   "components by BIC)")
        doc.img(figures.read_times(groups, out, f"study{n}_read_times.png"), "distribution of read times")
    elif view.study == "block_size_sweep":
        curves = tables.sweep_curves(df)
        doc.table(tables.sweep_table(curves), "throughput (MB/s) against block size; plateau: under 5% gain per "
                                              "doubling from there on")
        doc.img(figures.sweep(curves, {k: plateau(v) for k, v in curves.items()}, out, f"study{n}_sweep.png"),
                "throughput against block size")
    else:
        doc.table(tables.config_table(df), "mean throughput per run (MB/s)")
        if view.study == "study_gluster":
            doc.img(figures.block_size_sync(trial_frame(store, view.name), out, f"study{n}_block_size_sync.png"),
                    "throughput against block size by O_SYNC mode")
        doc.p("Fit these runs with `glmodel fit --campaign " + view.name + " --family "
              + ("hardware" if view.study == "study_hardware" else "gluster") + "` and pass the model file to "
              "`glmodel report --model`.")


def _model_frame(store: Store, provenance: dict[str, Any]) -> pd.DataFrame | None:
    """The rows a model was fitted on: its campaigns from the store, or the table file it names."""
    names = list(provenance.get("campaigns") or [])
    known = {c.name for c in store.campaigns()}
    if names and all(n in known for n in names):
        import pandas as pd

        return pd.concat([trial_frame(store, n) for n in names], ignore_index=True)
    source = Path(str(provenance.get("store", "")))
    if source.suffix in (".csv", ".parquet") and source.is_file():
        return read_table(source)
    return None


def _model_section(doc: Doc, store: Store, mf: ModelFile, model_path: Path, out: Path) -> None:
    import pandas as pd


    prov = mf.doc.get("provenance", {})
    doc.h2(f"Model: {model_path.name}", "model")
    doc.p(f"family {prov.get('family', '?')}, fitted on {prov.get('rows', '?')} rows from {prov.get('store', '?')}.")
    frame = _model_frame(store, prov)
    for metric in mf.metrics:
        rep = mf.doc["metrics"][metric]["report"]
        doc.h3(f"{metric}: selected model {rep['selected']}")
        doc.table(pd.DataFrame(comparison_rows(rep)), f"{metric}: models on the same data. {comparison_caption(rep)}")
        coef = pd.DataFrame([{"term": readable(r["term"]), "estimate": r["estimate"], "std err": r["std_error"],
                              "t": r["t"], "p": r["p"], "95% low": r["ci_low"], "95% high": r["ci_high"],
                              "HC3 std err": r.get("std_error_hc3"), "HC3 p": r.get("p_hc3"),
                              "standardized β": r["standardized"]} for r in rep["coefficients"]])
        doc.table(coef, f"{metric}: the study's MLR coefficients (MB/s per unit of each input; HC3: standard "
                  "errors robust to a variance that changes with throughput)")
        for finding in rep.get("diagnostics", {}).get("findings", []):
            doc.p(f"{metric}: {readable(finding, prose=True)}")
        for line in replication_lines(rep):
            doc.p(f"{metric}: {line}")
        # the importance of the model that answers (the selected one), the study's MLR only where it is selected
        # or the file has no other
        of = rep["selected"] if rep["selected"] in rep["importance"] else \
            ("mlr" if "mlr" in rep["importance"] else next(iter(rep["importance"]), ""))
        imp: list[dict[str, Any]] = rep["importance"].get(of, [])
        if imp:
            explained = rep.get("explained", {}).get(of)
            rows_vi = [{"input": label(i["feature"]), "importance (share)": i["vi"], "95% low": i.get("vi_low"),
                        "95% high": i.get("vi_high"),
                        "of measured variance": i["vi"] * explained if explained is not None else None,
                        "S1": i["s1"], "S_T": i["st"]} for i in sorted(imp, key=lambda i: -i["vi"])]
            if explained is not None:
                rows_vi.append({"input": "unexplained (1 − CV R²)", "of measured variance": 1 - explained})
            doc.table(pd.DataFrame(rows_vi),
                      f"{metric}: predictor importance in the {of} model, S_i/ΣS_i with a bias-corrected bootstrap "
                      "interval; of measured variance: the share times what the model explains out of sample")
            doc.img(figures.importance(imp, f"{metric}: importance ({of} model)", out,
                                       f"model_{metric}_importance.png"), f"{metric} importance")
        if frame is not None and metric in frame:
            rows = with_derived(rows_for(frame, metric), metric)
            y = rows[metric].astype(float).tolist()
            yhat = [float(v) for v in mf.model(metric).predict(rows)]
            doc.img(figures.predicted_measured(y, yhat, f"{metric}: {rep['selected']}", out,
                                               f"model_{metric}_pred.png"), f"{metric} predicted vs measured")
            doc.img(figures.residuals(y, yhat, f"{metric}: residuals", out, f"model_{metric}_resid.png"),
                    f"{metric} residuals")
        else:
            doc.p("The rows this model was fitted on are not in this store, so predicted-vs-measured is left out.")
    if frame is not None:
        doc.img(figures.block_size_sync(frame, out, "model_block_size_sync.png"),
                "throughput against block size by O_SYNC mode")


def write_report(store: Store, out: Path, results: Answered | None = None,
                 campaign_names: list[str] | None = None) -> Written:
    """Render index.html, report.md and the figures into ``out``; return what was written.

    With ``results`` holding an answer (``api.answered``: a model and a question), the report opens with it: best
    buy, its change and interval, basis and verification, then the candidates, verification and the data's
    limits; campaigns, hosts, studies and the model's tables follow as an appendix.
    """
    views = campaigns(store, campaign_names)
    if not views and results is None:
        raise GlmodelError(f"{store.where}: no campaign to report on" + (f" (asked for {', '.join(campaign_names)})"
                                                                          if campaign_names else ""))
    # Everything is rendered into a directory beside ``out`` first and moved in only once all of it is there: a
    # model file or store that fails half-way (a damaged model read only when its section is drawn) leaves the
    # existing report as it was, figures included.
    import shutil
    import tempfile

    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        doc = _document(store, work, results, views)
        (work / "index.html").write_text(to_html(doc))
        (work / "report.md").write_text(to_markdown(doc))
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("*.png"):
            old.unlink()  # a figure of an earlier report must not pass for this one's
        for made in work.iterdir():
            made.replace(out / made.name)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    html_path, md_path = out / "index.html", out / "report.md"
    return Written(html_path, md_path, sorted(out.glob("*.png")), [b.text for b in doc.blocks if b.kind == "h2"])


def _document(store: Store, out: Path, results: Answered | None, views: list[Any]) -> Doc:
    """The report's document, its figures written into ``out``."""
    question = results.question if results is not None else None
    doc = Doc("glmodel report" + (f": {printable(question.name)}" if question is not None else ""))
    if results is not None and results.answer is not None:
        settings = settings_count(results.model)
        context = context_rows(results.answer, results.verification,
                               dict(results.model.doc.get("provenance", {})), settings, str(results.path))
        add_answer(doc, results.answer, results.verification, out, context)
        add_limits(doc, results.answer, results.domains, settings)
        doc.h2("Appendix for engineers", "appendix")
        doc.p("The model behind the answer (comparison, coefficients, diagnostics, importance), then the campaigns "
              "with their hosts and measured baselines, and the methodology studies in the store.")
    if results is not None:
        _model_section(doc, store, results.model, results.path, out)
    behind = views
    if results is not None and results.answer is not None:
        # beside a model's answer, the campaigns and hosts listed are those the model was fitted on
        fitted_on = set(results.model.doc.get("provenance", {}).get("campaigns", []))
        behind = [v for v in views if v.name in fitted_on]
        if not behind:
            doc.h2("Campaigns and hosts", "campaigns")
            doc.p("None of the campaigns the model was fitted on is in this store (the model names its data in "
                  "its section above); the store's other campaigns did not feed it and are not listed.")
    if behind:
        _campaign_section(doc, store, behind)
    _since_last_time(doc, store, views)
    for n, v in enumerate([v for v in views if v.study], 1):
        _study_section(doc, store, v, out, n)
    return doc
