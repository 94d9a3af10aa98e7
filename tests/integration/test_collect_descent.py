"""A descent on the lab: the link lowered from today until the writes it carries have fallen at two of its levels;
the lower level is left out, the plan resumes to the same choice, and the store holds exactly the settings run."""

from __future__ import annotations

from pathlib import Path

import yaml

from gluster_model.dataset import trial_frame
from gluster_model.lab import LabState
from gluster_model.store import open_store

from .conftest import client_apart, glmodel

# Today: the lab's link unshaped (several hundred MB/s between nodes), the client apart from the two servers so that
# every write crosses its link (``conftest.client_apart``). 50 Mbit/s carries 6.25 MB/s and 20 Mbit/s
# 2.5 MB/s: both far below any write the lab makes today (28 MB/s at the least, on a machine busy with other labs),
# so the link binds at both and 5 Mbit/s is not needed.
PLAN = {
    "name": "descent",
    "factors": {"link": ["unlimited"], "servers": 2, "file_size": "4MB", "record_size": "1MB", "threads": 3,
                "sync": "odirect"},
    "design": {"type": "grid", "hardware": {"type": "list", "again": True, "settings": [{"link": "unlimited"}],
                                            "descend": {"link": ["50mbit", "20mbit", "5mbit"]}}},
    "workload": {"tests": ["write"]},
    "protocol": {"warmups": 0, "repetitions": 2, "outlier_rule": "none"},
    "baselines": {"iperf": {"seconds": 1, "omit": 0}, "fio": {"size": "16MB", "runtime": 1, "steady": True,
                                                                 "tests": ["seq_write", "seq_read"]}},
}
RUN = {"descent@lab:link=unlimited", "descent@lab:link=50mbit", "descent@lab:link=20mbit",
       "descent@lab:link=unlimited,again"}


def test_a_descent_stops_a_knob_once_its_stage_bound_twice_and_resumes_to_the_same_choice(
        lab_put_back: LabState, tmp_path: Path) -> None:
    plan = tmp_path / "descent.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    store = str(tmp_path / "d.db")
    cf = client_apart(lab_put_back, tmp_path)
    dry = glmodel("collect", "--cluster", cf, "--plan", str(plan), "--dry-run", check=True)
    assert "descent@lab:link=5mbit" in dry.stdout and "the most it takes" in dry.stdout  # an upper bound
    out = glmodel("collect", "--cluster", cf, "--plan", str(plan), "--store", store, timeout=900, check=True)
    said = " ".join(out.stdout.split())
    assert "descent of link: link=5mbit left out" in said, said
    with open_store(store, create=False) as st:
        assert {c.name for c in st.campaigns()} == RUN
        frame = trial_frame(st)
    writes = frame.groupby("campaign", observed=True)["write"].mean()
    today = writes["descent@lab:link=unlimited"]
    # why it stopped, from the store: each lower link carried at most its rate (a ceiling; 1 MB/s = 8 Mbit/s, the
    # shaper counts frames), and fell more than the descent's 15% below today
    for name, rate_mbps in (("descent@lab:link=50mbit", 50), ("descent@lab:link=20mbit", 20)):
        assert writes[name] <= 1.1 * rate_mbps / 8 and writes[name] < 0.85 * today, (name, writes.to_dict())
    again = glmodel("collect", "--cluster", cf, "--plan", str(plan), "--store", store, timeout=600, check=True)
    assert "descent of link: link=5mbit left out" in " ".join(again.stdout.split())
    with open_store(store, create=False) as st:
        assert {c.name for c in st.campaigns()} == RUN  # resumed: nothing measured twice, nothing added
        assert len(trial_frame(st)) == len(frame)
