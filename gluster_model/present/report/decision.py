"""The report as a decision document: the answer first (the question, the best buy with its expected change and
interval, whether it rests on measured data and whether it was verified), then the ranked candidates with prices,
the what-if figure, the verification, and the limits of the data. Every number comes from the what-if answer
and the verification, formatted by the same helpers as the terminal, so both show the same figures."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...model.features import label
from ...predict.whatif import Answer, show_value
from ..predict import change, change_words, money, num, rank_cell
from ...text import printable
from . import figures
from ..predict import gain_figure

if TYPE_CHECKING:
    from ...model.domain import Domain
    from ...verify import Verification
    from .document import Doc


def answer_lines(a: Answer, v: Verification | None) -> list[str]:
    """The first screen, in sentences: the question, per metric the best buy (or why there is none) and its
    verification, and what limits the baseline."""
    cur = printable(a.currency) or "unit of price"
    lines = [f"Question: which of {len(a.scenarios) - 1} candidates buys the most throughput per {cur} over "
             f"“{printable(a.baseline)}”? ({printable(a.source) or 'asked on the command line'}; model "
             f"{', '.join(sorted({m.model for m in a.metrics}))}, {a.level:.0%} intervals.)"]
    verdicts = {m.metric: m for m in v.metrics} if v is not None else {}
    for m in a.metrics:
        best = m.best
        if best is None:
            lines.append(f"{m.metric.capitalize()}: no candidate to recommend: {printable(m.no_best)}.")
            continue
        price = (f" for {money(best.price, printable(a.currency))} "
                 f"({num((best.gain_per_cost or 0) * 1000, '.1f')} MB/s per 1,000 {cur})" if best.price else "")
        basis = {"measured": "measured: this configuration is in the data",
                 "interpolated": "interpolated: inside the measured data"}.get(best.basis, best.basis)
        text = (f"{m.metric.capitalize()}: best buy “{printable(best.scenario)}”, expected change "
                f"{change_words(best)}{price}. {basis.capitalize()}.")
        if best.tied_with:
            text += (" Tied within the error with " + ", ".join(f"“{printable(n)}”" for n in best.tied_with) +
                     ": either by gain per price.")
        verdict = verdicts.get(m.metric)
        if verdict is None:
            text += " Not verified by measurement in this store."
        else:
            tie = " (a candidate it was tied with)" if verdict.measured_best_was_tied else ""
            held = {True: "the best buy held", False: f"the best buy did not hold (measured best: "
                    f"{printable(verdict.best_measured or '-')}{tie})", None: "the ranking could not be checked"}
            text += (f" Verified on {', '.join(verdict_clusters(v))}: MAPE {num(verdict.mape, '.1f')}% over "
                     f"{verdict.n} scenarios, {sum(c.inside for c in verdict.checks)} of {verdict.n} inside their "
                     f"intervals; {held[verdict.ranking_held]}.")
        lines.append(text)
    limits = "; ".join(f"{m.metric}: the {m.limit_text}" for m in a.metrics if m.limit)
    if limits:  # the same limit the terminal, --details and the JSON name (MetricAnswer.limit)
        lines.append(f"What limits “{printable(a.baseline)}”: {limits}.")
    parts = [f"{m.metric}: nothing in the question moves it" if m.top_gain is None else
             f"{m.metric}: “{printable(m.top_gain.scenario)}” gains most ({change_words(m.top_gain)})"
             for m in a.metrics]
    if parts:
        lines.append("The question's largest gain: " + "; ".join(parts) + ".")
    return lines


def verdict_clusters(v: Verification | None) -> list[str]:
    if v is None:
        return []
    return sorted(set(v.clusters)) or ["the cluster"]


CONTEXT_INPUTS = ("network_gbps", "disk_read_mbps", "disk_write_mbps", "client_ram_gb", "cpu_score", "servers",
                  "clients", "replica", "layout", "shard", "file_size")


def settings_count(mf: Any) -> int:
    """The number of hardware settings the report names, one count everywhere: the settings cross-validation
    held out whole (a setting measured a second time, replicate runs, is one setting), else the settings the
    domain measured."""
    counts = []
    for metric in mf.metrics:
        for score in mf.doc["metrics"][metric]["report"].get("comparison", []):
            cv = score.get("cv") or {}
            if cv.get("grouped_by") == "hardware setting" and cv.get("groups"):
                counts.append(int(cv["groups"]))
    return max(counts) if counts else max((mf.domain(m).n_settings for m in mf.metrics), default=0)


def context_rows(a: Answer, v: Verification | None, provenance: dict[str, Any], settings: int,
                 model_file: str) -> list[dict[str, str]]:
    """What the decision rests on, one row each: today's hardware and volume, where the data come from (one
    count of settings and runs, the same everywhere), where the prices come from, whether it was verified."""
    today = a.scenarios.get(a.baseline, {})
    shown = [f"{label(k)} {show_value(k, today[k])}" for k in CONTEXT_INPUTS if k in today]
    camps = [str(c) for c in provenance.get("campaigns", [])]
    lab = camps and all("@lab" in c for c in camps)
    source = (f"{provenance.get('rows', '?')} measured runs in {settings} hardware setting(s), from "
              f"{printable(str(provenance.get('store', '?')))}; "
              + ("a glmodel lab whose nodes emulate the hardware (link, disk, RAM and CPU set and measured)"
                 if lab else "the cluster(s) the campaigns name"))
    verified = ("yes: " + ", ".join(f"{m.metric} MAPE {num(m.mape, '.1f')}% over {m.n} scenario(s)"
                                    for m in v.metrics) if v is not None and v.metrics else
                "no: `glmodel verify --cluster FILE --model MODEL --scenarios QUESTION --plan PLAN` builds the "
                "candidates and measures them")
    priced = any(s is not None for s in a.prices.values())
    return [{"what": "today", "value": f"“{printable(a.baseline)}”: " + ", ".join(shown)},
            {"what": "data", "value": source},
            {"what": "model", "value": f"{printable(model_file)}, {', '.join(sorted({m.model for m in a.metrics}))}"},
            {"what": "prices", "value": (f"from {printable(a.source) or 'the question'}, in "
                                          f"{printable(a.currency) or 'its unit'}: the file's figures, "
                                          "illustrative unless they are your quotes") if priced else "none given"},
            {"what": "verified", "value": verified}]


def add_answer(doc: Doc, a: Answer, v: Verification | None, out: Path,
               context: list[dict[str, str]] | None = None) -> None:
    """Sections: the answer and what it rests on; ranked candidates with the what-if figure; verification;
    limits of the data."""
    import pandas as pd


    doc.h2("The answer", "answer")
    for line in answer_lines(a, v):
        doc.lead(line)
    if context:
        doc.table(pd.DataFrame(context), "What the answer rests on")
    doc.h2("Candidates, ranked by throughput gained per price", "candidates")
    doc.p("A candidate is ranked only when it is priced, inside the measured data, below what its own hardware "
          "can carry, and gains with an interval that excludes zero; “change” is the expected change against the "
          f"baseline with its own {a.level:.0%} interval (not the gap between two predictions).")
    cur = printable(a.currency)
    for m in a.metrics:
        rows = [{"scenario": printable(p.scenario), "rank": rank_cell(p) if p.delta is not None else "baseline",
                 f"price {cur}".strip(): money(p.price), "predicted MB/s": num(p.value),
                 f"{a.level:.0%} interval": f"{num(p.low)}–{num(p.high)}", "change MB/s": change(p),
                 f"MB/s per 1,000 {cur}".strip(): num(p.gain_per_cost * 1000, "+.1f")
                 if p.gain_per_cost is not None else "-", "basis": p.basis,
                 "why not ranked": p.not_ranked} for p in m.predictions]
        doc.table(pd.DataFrame(rows), f"{m.metric} (MB/s), model {m.model}")
    path = out / "whatif.png"
    gain_figure(a, path)
    doc.img(path.name, "MB/s gained per price for each priced candidate, the best buy marked")
    add_verification(doc, v, out)


def add_verification(doc: Doc, v: Verification | None, out: Path) -> None:
    import pandas as pd

    doc.h2("Verification: predicted against measured", "verification")
    if v is None or not v.metrics:
        doc.p("Not verified: this store holds no measurement of these scenarios. `glmodel verify --cluster FILE "
              "--model MODEL --scenarios QUESTION --plan PLAN` builds each scenario, measures it with the training "
              "plan's protocol and stores the result here.")
        return
    doc.p(f"Measured with plan {v.plan} in {len(v.campaigns)} campaign(s); predictions at the hardware as "
          "measured.")
    for m in v.metrics:
        doc.table(pd.DataFrame([{"scenario": printable(c.scenario), "predicted MB/s": num(c.predicted),
                                 f"{v.level:.0%} interval": f"{num(c.low)}–{num(c.high)}",
                                 "measured MB/s": f"{num(c.measured)} (n={c.trials})",
                                 "error %": num(c.error_pct, "+.1f"), "inside": "yes" if c.inside else "no",
                                 "basis": c.basis} for c in m.checks]),
                  f"{m.metric}: MAPE {num(m.mape, '.1f')}%, {sum(c.inside for c in m.checks)} of {m.n} inside the "
                  f"interval; best per price predicted {printable(m.best_predicted or '-')}, measured "
                  f"{printable(m.best_measured or '-')}")
        doc.img(figures.predicted_measured([c.measured for c in m.checks], [c.predicted for c in m.checks],
                                           f"{m.metric}: verification", out, f"verify_{m.metric}.png"),
                f"{m.metric}: predicted against measured")
    for name, why in v.skipped.items():
        doc.p(f"Not measured: {printable(name)}: {why}")


def add_limits(doc: Doc, a: Answer, domains: dict[str, Domain], settings: int = 0) -> None:
    """Per input: the measured range (or the one value measured) beside what the question asked."""
    import pandas as pd

    doc.h2("Limits of the data", "limits")
    first = next(iter(domains.values()))
    rows: list[dict[str, Any]] = []
    for f in first.inputs:
        asked = [s[f.name] for s in a.scenarios.values() if f.name in s]
        if f.kind == "categorical":
            measured = ", ".join(f.levels)
            asked_text = ", ".join(dict.fromkeys(str(x) for x in asked))
        else:
            measured = (f"{show_value(f.name, f.low)} – {show_value(f.name, f.high)}" if len(f.values) > 1
                        else show_value(f.name, f.values[0]) if f.values else "")
            asked_text = (f"{show_value(f.name, min(asked))} – {show_value(f.name, max(asked))}"
                          if asked and min(asked) != max(asked) else show_value(f.name, asked[0]) if asked else "")
        varied = len(f.levels) > 1 if f.kind == "categorical" else len(f.values) > 1
        rows.append({"input": label(f.name), "measured": measured, "asked": asked_text,
                     "in the data": "varied" if varied else "never varied: its effect is unknown"})
    doc.table(pd.DataFrame(rows), "each input: what was measured and what the question asked")
    n = settings or first.n_settings
    if n:
        doc.p(f"Hardware was measured in {n} settings (link, disks, RAM, CPU as each campaign measured them); a "
              "question's hardware counts as inside the data only when it is one of them or a mix of them, "
              "however wide each input's own range.")
    guesses = a.extrapolated
    doc.p("Extrapolated scenarios (guesses, never ranked): " + ", ".join(printable(g) for g in guesses) + "."
          if guesses else "No scenario of this question is extrapolated.")
