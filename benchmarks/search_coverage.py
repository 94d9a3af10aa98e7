"""How often the search's confirmed gain interval holds a known ratio, and how often its verdict is right, on
searches simulated with known truth: the run footing (``judge_search``: runs as the unit, the session's drift
counted) beside the trials taken as independent draws (Welch, how the search judged before 2026-11-28).

Each simulated search has the shape of the shipped ones: the defaults in the screening (3 trials), the more-trials
round (6) and two confirmation looks (6 each); the candidate in the screening and both looks. Every run is
shifted by its own draw (``--drift``, log SD) and every trial by ``--noise`` about its run. Printed per setting:
the coverage of the 90% interval, and the share of searches that said "set" for a candidate that gains nothing
(false advice) and for one that gains ``--gain``.

With ``--looks K`` the confirmation is the search's own procedure (``further_looks``): the first look judged
alone, and where it cannot decide, looks 2 to K measured and the gain judged once over all of them (two analyses:
the figures show what the second costs in coverage and false advice).

    .venv/bin/python benchmarks/search_coverage.py [--n 2000] [--gain 1.15] [--looks K] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gluster_model.campaign.search import further_looks, judge_search, step_campaign  # noqa: E402
from gluster_model.stats.ratios import welch_ratio  # noqa: E402
from gluster_model.store.identity import SearchRound, SearchStep  # noqa: E402

OPTIONS = {"metadata_cache": [False, True]}
FEATURES = {"d": {"metadata_cache": False}, "c": {"metadata_cache": True}}
LOOKS = ("s.confirm", "s.confirm2")
SETTINGS = ((0.0, 0.05), (0.03, 0.05), (0.06, 0.04), (0.10, 0.10))  # (drift, trial noise), log SDs


def one_search(rng: np.random.Generator, ratio: float, drift: float, noise: float) -> dict[str, dict[str, list[float]]]:
    def run(mean: float, n: int) -> list[float]:
        return list(mean * rng.lognormal(rng.normal(0, drift), noise, n))

    return {"s": {"d": run(100, 3), "c": run(100 * ratio, 3)}, "s.more": {"d": run(100, 6)},
            "s.confirm": {"d": run(100, 6), "c": run(100 * ratio, 6)},
            "s.confirm2": {"c": run(100 * ratio, 6), "d": run(100, 6)}}


def sequential(rng: np.random.Generator, ratio: float, drift: float, noise: float, looks: int
               ) -> tuple[dict[str, dict[str, list[float]]], tuple[str, ...]]:
    """One search through the confirmation as the search runs it: look 1, then looks 2..K where it is unclear."""
    def run(mean: float, n: int) -> list[float]:
        return list(mean * rng.lognormal(rng.normal(0, drift), noise, n))

    per = {"s": {"d": run(100, 3), "c": run(100 * ratio, 3)}, "s.more": {"d": run(100, 6)},
           "s.confirm": {"d": run(100, 6), "c": run(100 * ratio, 6)}}
    first = judge_search("read", OPTIONS, per, FEATURES, ("s.confirm",), ["d", "c"], 5)
    names = ["s.confirm"]
    for k, _ in further_looks(["d", "c"], first.gain, looks, 40):  # type: ignore[arg-type]
        look = step_campaign(SearchStep("s", SearchRound.CONFIRM, k))
        per[look] = {"d": run(100, 6), "c": run(100 * ratio, 6)}
        names.append(look)
    return per, tuple(names)


def setting(n: int, gain: float, drift: float, noise: float, seed: int, looks: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    out = {"drift": drift, "noise": noise}
    for name, ratio in (("null", 1.0), ("gain", gain)):
        inside = welch_inside = said_set = welch_set = 0
        for _ in range(n):
            if looks:
                per, names = sequential(rng, ratio, drift, noise, looks)
            else:
                per, names = one_search(rng, ratio, drift, noise), LOOKS
            r = judge_search("read", OPTIONS, per, FEATURES, names, ["d", "c"], 7)
            assert r.gain is not None
            inside += r.gain.low <= ratio <= r.gain.high
            said_set += r.verdict == "set"
            w = welch_ratio([x for c in names for x in per[c]["d"]], [x for c in names for x in per[c]["c"]], 0.90)
            welch_inside += w.low <= ratio <= w.high
            welch_set += w.low > 1
        out |= {f"{name}_coverage": inside / n, f"{name}_coverage_trials": welch_inside / n,
                f"{name}_set": said_set / n, f"{name}_set_trials": welch_set / n}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--gain", type=float, default=1.15)
    ap.add_argument("--looks", type=int, default=0, help="the search's own confirmation: look 1, then up to K")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [setting(args.n, args.gain, d, s, seed, args.looks) for seed, (d, s) in enumerate(SETTINGS)]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    how = f"the search's confirmation, up to {args.looks} looks" if args.looks else "two looks always"
    print(f"{args.n} simulated searches a row ({how}); 90% intervals; a candidate gaining nothing (null) or "
          f"x{args.gain}")
    print(f"{'drift':>6} {'noise':>6} | {'coverage runs':>13} {'trials':>7} | {'false set runs':>14} {'trials':>7} | "
          f"{'power runs':>10} {'trials':>7}")
    for r in rows:
        print(f"{r['drift']:>6.2f} {r['noise']:>6.2f} | {r['null_coverage']:>13.3f} {r['null_coverage_trials']:>7.3f} | "
              f"{r['null_set']:>14.3f} {r['null_set_trials']:>7.3f} | {r['gain_set']:>10.3f} "
              f"{r['gain_set_trials']:>7.3f}")
    if not math.isfinite(sum(r["null_coverage"] for r in rows)):
        sys.exit("a coverage was not computed")


if __name__ == "__main__":
    main()
