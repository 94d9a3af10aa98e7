"""Data tables handed to fit: a repeated column name is refused (which column holds the figures cannot be
told), and rows without a metric are counted in the fit's notes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gluster_model.dataset import read_table
from gluster_model.errors import ConfigError

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "hardware_emulated.csv"


def test_a_header_naming_a_metric_twice_is_refused_in_one_line(tmp_path: Path) -> None:
    lines = SHIPPED.read_text().splitlines()
    header = lines[0].split(",")
    header[header.index("servers")] = "read"  # a servers column headed `read`
    bad = tmp_path / "t.csv"
    bad.write_text("\n".join([",".join(header), *lines[1:]]) + "\n")
    with pytest.raises(ConfigError) as err:
        read_table(bad)
    assert str(bad) in str(err.value) and "'read' more than once" in str(err.value)
    done = subprocess.run([sys.executable, "-m", "gluster_model.cli", "fit", "--data", str(bad), "--out",
                           str(tmp_path / "m.json")], capture_output=True, text=True)
    assert done.returncode != 0 and "Traceback" not in done.stderr and not (tmp_path / "m.json").exists()
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_shipped_table_still_reads() -> None:
    assert len(read_table(SHIPPED)) > 50


def test_rows_without_the_metric_are_counted_in_the_notes(tmp_path: Path) -> None:
    from gluster_model.model.fit import fit_metric

    frame = read_table(SHIPPED)
    frame.loc[frame.index[:7], "read"] = float("nan")
    fit = fit_metric(frame, "read", "hardware", models=["mlr"], importance_n=64, bootstrap=0, cv_repeats=1)
    assert f"7 of {len(frame)} row(s) have no positive read value" in " ".join(fit.notes)
    assert isinstance(frame, pd.DataFrame)


def test_where_keeps_the_rows_asked_for_and_refuses_in_one_line() -> None:
    import pandas as pd

    from gluster_model.dataset import restrict
    from gluster_model.errors import GlmodelError

    frame = pd.DataFrame({"regime": ["cached", "uncached", "uncached"], "file_size": [32 << 20, 480 << 20, 480 << 20],
                          "io_cache": [True, False, True], "threads": [2, 2, 4]})
    assert list(restrict(frame, ["regime=uncached", "io_cache=on"]).index) == [0]
    assert len(restrict(frame, ["file_size=480MB"])) == 2 and len(restrict(frame, ["threads=4"])) == 1
    for cond, said in (("regime", "give NAME=VALUE"), ("speed=1", "no column 'speed'"),
                       ("regime=hot", "no row left (values of regime here: cached, uncached)"),
                       ("threads=many", "--where 'threads=many'"), ("io_cache=maybe", "--where 'io_cache=maybe'")):
        with pytest.raises(GlmodelError, match=re.escape(said)) as err:
            restrict(frame, [cond])
        assert "\n" not in str(err.value)
