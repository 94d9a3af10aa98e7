"""`glmodel tune`: the option set a model recommends for a workload, simplified to what matters, and its gain."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gluster_model.errors import GlmodelError
from gluster_model.model import artifact
from gluster_model.model.fit import fit_frame
from gluster_model.predict.tune import tune

BOOLS = ("write_behind", "read_ahead", "io_cache", "quick_read", "md_cache")


def _frame(seed: int = 0) -> pd.DataFrame:
    """Every option combination at four record sizes and three io-cache sizes, measured twice. Known truth:
    write-behind on raises writes 40%, read-ahead on costs writes 10%; io-cache on raises reads 30% with a larger
    cache helping reads; quick-read and md-cache do nothing."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, (rec, cache, *flags) in enumerate(itertools.product(
            [4 << 10, 64 << 10, 1 << 20, 8 << 20], [16 << 20, 64 << 20, 256 << 20], *[[False, True]] * 5)):
        o = dict(zip(BOOLS, flags))
        size = (rec / (64 << 10)) ** 0.25
        write = 80 * size * (1.4 if o["write_behind"] else 1) * (0.9 if o["read_ahead"] else 1)
        read = 120 * size * (1.3 if o["io_cache"] else 1) * ((cache / (16 << 20)) ** 0.05 if o["io_cache"] else 1)
        for _ in range(2):
            rows.append({"record_size": rec, "cache_size": cache, **o, "config_hash": f"c{i}",
                         "write": write * rng.lognormal(0, 0.03), "read": read * rng.lognormal(0, 0.03)})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> artifact.ModelFile:
    fits, _ = fit_frame(_frame(), "gluster", ["write", "read"], models=["loglinear"], importance_n=64, bootstrap=0,
                        cv_repeats=1)
    path = tmp_path_factory.mktemp("tune") / "m.json"
    artifact.save(artifact.build(fits, {"data": "synthetic"}), path)
    return artifact.load(path)


def test_tune_finds_the_known_optimum_and_leaves_the_rest_at_gluster_defaults(model: artifact.ModelFile) -> None:
    advice = tune(model, ["record_size=1MB"], ["write", "read"])
    write = next(m for m in advice.metrics if m.metric == "write")
    rec = write.recommended.options
    assert rec["write_behind"] is True or rec["write_behind"] == 1
    assert not rec["read_ahead"]
    # quick-read and md-cache do nothing: left at Gluster's defaults (both on), said not to matter
    assert rec["quick_read"] and rec["md_cache"]
    assert {"quick_read", "md_cache", "cache_size", "io_cache"} <= set(write.not_mattering)
    # the defaults already have write-behind on and read-ahead off: the gain is nil and said to be so
    assert write.gain_low <= 0 <= write.gain_high
    assert write.commands("vol0") == []
    read = next(m for m in advice.metrics if m.metric == "read")
    assert read.recommended.options["io_cache"] and read.recommended.options["cache_size"] == 256 << 20
    assert read.gain_low > 0 and read.gain == pytest.approx(read.recommended.value - read.defaults.value)
    assert 1.3 < read.recommended.value / read.defaults.value < 1.55
    assert "gluster volume set vol0 performance.io-cache on" in read.commands("vol0")
    assert "gluster volume set vol0 performance.cache-size 256MB" in read.commands("vol0")
    assert advice.balanced is not None and advice.balanced.recommended.options["io_cache"]
    assert all(m.recommended.basis != "extrapolated" for m in advice.metrics)


def test_a_workload_outside_the_data_is_labelled(model: artifact.ModelFile) -> None:
    advice = tune(model, ["record_size=64MB"], ["read"])
    assert advice.metrics[0].recommended.basis == "extrapolated" and advice.notes


def test_tune_refuses_what_it_cannot_answer(model: artifact.ModelFile, tmp_path: Path) -> None:
    with pytest.raises(GlmodelError, match="unknown feature"):
        tune(model, ["turbo=on"])
    with pytest.raises(GlmodelError, match="--metric: random_read not in"):
        tune(model, [], ["random_read"])
    frame = _frame().assign(servers=lambda f: 1 + (f.index % 3))
    fits, _ = fit_frame(frame, "hardware", ["write"], models=[], importance_n=64, bootstrap=0, cv_repeats=1)
    path = tmp_path / "hw.json"
    artifact.save(artifact.build(fits, {"data": "synthetic"}), path)
    with pytest.raises(GlmodelError, match="varied no Gluster volume option"):
        tune(artifact.load(path))


@pytest.mark.parametrize("args, named", [
    (["--set", "turbo=on"], "--set: turbo: unknown feature"),
    (["--metric", "random_read"], "--metric: random_read not in"),
    (["--volume", "a;rm -rf /"], "--volume: a;rm -rf /: a volume name is"),
])
def test_tune_command_refuses_in_one_line(model: artifact.ModelFile, args: list[str], named: str) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "gluster_model.cli", "tune", "--model", model.path, *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (1, 2) and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], done.stderr


def test_tune_command_prints_the_advice_and_its_commands(model: artifact.ModelFile) -> None:
    import json
    import subprocess
    import sys

    argv = [sys.executable, "-m", "gluster_model.cli", "tune", "--model", model.path, "--set", "record_size=1MB",
            "--metric", "read", "--volume", "vol0"]
    shown = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True).stdout
    assert "read (loglinear model): io-cache size 256MB, io-cache on" in shown, shown
    assert "gluster volume set vol0 performance.io-cache on" in shown
    data = json.loads(subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=120,
                                     check=True).stdout)
    read = data["metrics"][0]
    assert read["recommended"]["options"]["io_cache"] is True and read["gain_low"] > 0
    assert "gluster volume set vol0 performance.cache-size 256MB" in read["commands"]


def test_the_advice_as_a_what_if_file_predicts_what_tune_predicted(model: artifact.ModelFile, tmp_path: Path) -> None:
    """The file `tune --scenarios-out` writes is read back by predict (and verify) into the very configurations tune
    predicted: the same values, so the same predictions and gains."""
    from click.testing import CliRunner

    from gluster_model.cli import cli
    from gluster_model.predict.scenarios import from_file
    from gluster_model.predict.whatif import model_inputs, what_if

    out = tmp_path / "advice.yaml"
    result = CliRunner().invoke(cli, ["tune", "--model", model.path, "--set", "record_size=1MB", "--metric", "read",
                                      "--scenarios-out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.output
    advice = tune(model, ["record_size=1MB"], ["read"])
    q = from_file(out, model_inputs(model, ["read"]))
    assert [s.name for s in q.scenarios] == ["Gluster defaults", "tuned for read", "pitfall for read: io-cache off"]
    assert q.candidates[0].values["io_cache"] is True and q.candidates[0].values["cache_size"] == 256 << 20
    answer = what_if(model, q, metrics=["read"], level=advice.level).metrics[0]
    base, cand, _ = answer.predictions
    read = advice.metrics[0]
    assert base.value == pytest.approx(read.defaults.value) and cand.value == pytest.approx(read.recommended.value)
    assert cand.delta == pytest.approx(read.gain)
    assert (cand.delta_low, cand.delta_high) == pytest.approx((read.gain_low, read.gain_high))
    bad = CliRunner().invoke(cli, ["tune", "--model", model.path, "--scenarios-out", str(tmp_path / "x.txt")])
    assert bad.exit_code != 0 and "--scenarios-out" in bad.output and "Traceback" not in bad.output


def test_the_balance_moves_only_options_some_metric_s_own_advice_moved(model: artifact.ModelFile) -> None:
    advice = tune(model, ["record_size=64KB"], ["write", "read"])
    moved = {n for m in advice.metrics for n, v in m.recommended.options.items() if v != m.defaults.options[n]}
    assert advice.balanced is not None
    balanced = advice.balanced.recommended.options
    changed = {n for n, v in balanced.items() if v != advice.balanced.defaults.options[n]}
    assert changed <= moved and "io_cache" in changed  # quick-read and md-cache, which do nothing, stay put


def test_boosted_trees_judge_a_change_by_bootstrap_refits(tmp_path: Path) -> None:
    """Boosted trees have no covariance: predict gives a change no interval, tune asks for one from bootstrap
    refits on resampled configurations. A real effect (io-cache +30% in truth) is clear of zero and its interval
    holds the true change; an inert option (md-cache) is not advice however the trees wiggle."""
    from gluster_model.predict.tune import REFITS, _contrast, _matters

    fits, _ = fit_frame(_frame(seed=4), "gluster", ["read"], models=["gbm"], importance_n=64, bootstrap=0,
                        cv_repeats=1)
    path = tmp_path / "gbm.json"
    artifact.save(artifact.build(fits, {"data": "synthetic"}), path)
    mf = artifact.load(path)
    a = {"record_size": 1 << 20, "cache_size": 64 << 20, "write_behind": True, "read_ahead": False,
         "io_cache": False, "quick_read": True, "md_cache": True}
    size = (1 << 20) / (64 << 10)
    truth = 120 * size ** 0.25 * (1.3 * 4 ** 0.05 - 1)
    for b in ({**a, "io_cache": True}, {**a, "md_cache": False}):
        p = mf.predict([a, b], 0.9, metric="read", use="gbm")
        assert np.isnan(p.delta_low[1])  # predict spends no refits
        change, low, high, base = _contrast(mf, a, b, "read", 0.9, "gbm")
        again = mf.predict([a, b], 0.9, metric="read", use="gbm", change_refits=REFITS)
        assert (low, high) == (again.delta_low[1], again.delta_high[1])  # the same resamples, reproducibly
        assert change == pytest.approx(p.value[1] - p.value[0]) and low <= change <= high
        # narrower than the bound two prediction intervals give, which holds the noise of both runs
        assert high - low < (p.high[1] - p.low[0]) - (p.low[1] - p.high[0])
        assert _matters(change, low, high, base) == bool(b["io_cache"])
        if b["io_cache"]:
            assert low <= truth <= high, (low, truth, high)
    advice = tune(mf, ["record_size=1MB"], ["read"], use="gbm")
    rec = advice.metrics[0].recommended.options
    assert rec["io_cache"] and rec["quick_read"] and rec["md_cache"] and not rec["read_ahead"]


def test_each_metric_names_its_costliest_option_change_and_the_what_if_file_carries_it(
        model: artifact.ModelFile, tmp_path: Path) -> None:
    """Known truth at 1 MB records: turning write-behind off costs writes 1 - 1/1.4 = 29% (read-ahead on only 10%);
    io-cache off costs reads 1 - 1/(1.3 * 16^0.05) = 31%. Advice that keeps the defaults (writes) still says what
    not to do, and the what-if file holds that change so `verify` can measure a non-zero predicted change."""
    import yaml

    from gluster_model.predict.tune import Advice

    advice = tune(model, ["record_size=1MB"], ["write", "read"])
    write, read = (next(m for m in advice.metrics if m.metric == k) for k in ("write", "read"))
    assert write.pitfall is not None and (write.pitfall.option, write.pitfall.value) == ("write_behind", False)
    assert write.pitfall.low <= write.pitfall.change <= write.pitfall.high < 0
    assert write.pitfall.change / write.recommended.value == pytest.approx(-(1 - 1 / 1.4), abs=0.04)
    assert read.pitfall is not None and (read.pitfall.option, read.pitfall.value) == ("io_cache", False)
    assert read.pitfall.change / read.recommended.value == pytest.approx(-(1 - 1 / (1.3 * 16 ** 0.05)), abs=0.05)
    q = advice.question()
    names = [c["name"] for c in q["candidates"]]
    # the write recommendation is the defaults: not a candidate of its own, its pitfall is
    assert names == ["tuned for read", "tuned, balanced", "pitfall for write: write-behind off",
                     "pitfall for read: io-cache off"] or names == ["tuned for read",
                                                                    "pitfall for write: write-behind off",
                                                                    "pitfall for read: io-cache off"], names
    pit = next(c for c in q["candidates"] if c["name"].startswith("pitfall for write"))
    assert pit["set"]["write_behind"] is False and pit["set"]["read_ahead"] is False
    assert all(c["set"] != q["baseline"]["set"] for c in q["candidates"])
    yaml.safe_dump(q)  # plain values only
    assert isinstance(advice, Advice) and advice.to_json()["metrics"][0]["pitfall"]["option"] == "write_behind"


def test_an_option_that_never_costs_is_no_pitfall(model: artifact.ModelFile) -> None:
    """quick-read and md-cache do nothing in the truth: never named as what to avoid."""
    for rec in ("4KB", "64KB", "1MB", "8MB"):
        for m in tune(model, [f"record_size={rec}"], ["write", "read"]).metrics:
            assert m.pitfall is None or m.pitfall.option not in ("quick_read", "md_cache")


def test_an_option_is_said_not_to_matter_only_when_an_equivalence_test_shows_it(tmp_path: Path) -> None:
    """Noisy data (40% run-to-run): quick-read's true effect is nil, but its change's interval is wide, so it is
    'unclear', never 'does not matter'; the Bonferroni correction counts every option change tested."""
    noisy = _frame(seed=3)
    rng = np.random.default_rng(4)
    noisy["write"] = noisy["write"] * rng.lognormal(0, 0.4, size=len(noisy))
    fits, _ = fit_frame(noisy, "gluster", ["write"], models=["loglinear"], importance_n=64, bootstrap=0,
                        cv_repeats=1)
    path = tmp_path / "noisy.json"
    artifact.save(artifact.build(fits, {"data": "synthetic"}), path)
    advice = tune(artifact.load(path), ["record_size=1MB"], ["write"])
    (write,) = advice.metrics
    assert "quick_read" in write.unclear and "quick_read" not in write.not_mattering
    assert write.contrasts == 5 + 2  # five on/off options, io-cache size at three levels
