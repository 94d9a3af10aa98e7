"""Pure parts of the methodology studies: mode detection, plateau, the 3-sigma rule with re-run, the dd engine's
scripts and parser, plan variants, and workload identity."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gluster_model.bench.dd import dd_argv, parse_pass, pass_script, reap_argv
from gluster_model.bench.workload import Workload
from gluster_model.errors import ConfigError, ParseError
from gluster_model.plan.file import PlanFile
from gluster_model.plan.protocol import Protocol, next_step
from gluster_model.stats.summary import detect_modes, overhead_percent, plateau, summarize


def test_trimodal_sample_yields_three_modes_with_their_weights() -> None:
    rng = np.random.default_rng(7)
    sample = np.concatenate([rng.normal(0.010, 0.0008, 500), rng.normal(0.030, 0.0015, 300),
                             rng.normal(0.060, 0.0030, 200)])
    modes = detect_modes(list(sample), seed=0)
    assert len(modes) == 3
    assert [round(m.mean, 3) for m in modes] == pytest.approx([0.010, 0.030, 0.060], abs=0.001)
    assert [m.weight for m in modes] == pytest.approx([0.5, 0.3, 0.2], abs=0.03)


def test_unimodal_sample_yields_one_mode() -> None:
    rng = np.random.default_rng(3)
    modes = detect_modes(list(rng.normal(0.02, 0.002, 400)), seed=0)
    assert len(modes) == 1 and modes[0].weight == pytest.approx(1.0) and modes[0].mean == pytest.approx(0.02, 0.02)


def test_plateau_is_first_size_after_which_every_doubling_gains_under_5_percent() -> None:
    curve = [(1, 1.0), (2, 2.0), (4, 3.9), (8, 4.0), (16, 4.1), (32, 4.15)]
    assert plateau(curve) == 4
    assert plateau([(1, 1.0), (2, 2.0), (4, 4.0)]) is None  # still climbing
    # a x4 step must gain under (1.05)^2 - 1 = 10.25%
    assert plateau([(1, 10.0), (4, 10.9), (16, 11.0)]) == 1
    assert plateau([(1, 10.0), (4, 11.5), (16, 11.6)]) == 4


def test_summary_bands_and_overhead() -> None:
    s = summarize([10, 12, 14])
    assert (s.mean, s.sd) == (12, 2) and (s.low, s.high) == (6, 18)
    assert overhead_percent(15, 10) == pytest.approx(50)


def test_three_sigma_rule_rejects_and_asks_for_a_replacement() -> None:
    p = Protocol(repetitions=11, outlier_rule="three_sigma", max_reruns=2, rewarm=True, warmups=5)
    kept = [{"read": 100.0 + i % 2} for i in range(11)] + [{"read": 400.0}]
    step = next_step(kept, 0, p)
    assert step.more and step.flag == [11]
    assert not next_step(kept[:11], 0, p).more  # nothing outside the band: done
    assert next_step(kept, 2, p).unstable  # re-runs used up


DD_OUT = """GLMDD 0 0 1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.00150 s, 699 MB/s
GLMDD 1 1 dd: error reading '/mnt/x/f1': Input/output error
"""


def test_dd_pass_parser_reads_each_reader_and_names_failures() -> None:
    readers = parse_pass(DD_OUT, "10.0.0.1", 2)
    assert readers[0].bytes == 1048576 and readers[0].seconds == pytest.approx(0.0015)
    assert readers[0].kbps == pytest.approx(1024 / 0.0015)
    assert readers[1].error and "Input/output error" in readers[1].error
    with pytest.raises(ParseError, match="reader\\(s\\) 2"):
        parse_pass(DD_OUT, "10.0.0.1", 3)


def test_dd_argv_and_script_quote_paths() -> None:
    assert dd_argv("write", "/m/f0", 4096, 10, "none")[-1] == "conv=fsync"
    assert dd_argv("read", "/m/f0", 1, 10, "odirect")[-1] == "iflag=direct"
    script = pass_script("read", "/m/a b", 2, 4096, 8, "none")
    assert "'if=/m/a b/f0'" in script and "'if=/m/a b/f1'" in script and script.count(") &") == 2
    pat = reap_argv("/m/d")[-1]
    assert re.search(pat, " ".join(dd_argv("write", "/m/d/f3", 1, 2, "none")))
    assert not re.search(pat, " ".join(dd_argv("write", "/m/dx/f3", 1, 2, "none")))


def test_workload_engines_and_identity() -> None:
    # Defaults stay out of the config hash, so runs stored before engines existed keep theirs.
    assert set(Workload().identity) == set(Workload().model_dump()) - {"engine", "target", "degraded",
                                                                                   "cache", "files", "shared_read",
                                                                                   "large_files"}
    assert Workload(engine="fio", tests=["file_create"], files=50).identity["files"] == 50
    assert Workload(engine="dd", tests=["read"], target="local").identity["target"] == "local"
    with pytest.raises(ValueError, match="use engine dd below"):
        Workload(record_size="512")
    with pytest.raises(ValueError, match="up to 16MB"):
        Workload(record_size="64MB", file_size="128MB")
    with pytest.raises(ValueError, match="engine dd runs write, read, not random; they run with engine iozone or fio"):
        Workload(engine="dd")
    with pytest.raises(ValueError, match="measures the Gluster mount; local targets .* run with engine dd "):
        Workload(target="local")
    with pytest.raises(ValueError, match="engine 'fi0' is not one of iozone, dd, fio"):
        Workload(engine="fi0")
    assert Workload(engine="dd", tests=["read"], file_size="4KB", record_size="16MB").file_size == "16384k"


def test_plan_variant_overrides_and_names_itself() -> None:
    plan = PlanFile.model_validate({
        "name": "rc", "factors": {"engine": "dd", "file_size": ["1MB", "10MB"], "threads": 1},
        "workload": {"tests": ["read"]}, "protocol": {"warmups": 5, "repetitions": 30},
        "variants": {"quick": {"factors": {"file_size": "1MB", "threads": None}, "protocol": {"repetitions": 11}}}})
    q = plan.variant("quick")
    assert q.name == "rc.quick" and q.factors["file_size"] == [1 << 20] and "threads" not in q.factors
    assert (q.protocol.warmups, q.protocol.repetitions) == (5, 11)
    with pytest.raises(ConfigError, match="no variant 'long'"):
        plan.variant("long")
    bad = PlanFile.model_validate({"name": "x", "factors": {"threads": 1},
                                   "variants": {"q": {"protocol": {"repetitions": 0}}}})
    with pytest.raises(ConfigError, match="variants.q"):
        bad.variant("q")
