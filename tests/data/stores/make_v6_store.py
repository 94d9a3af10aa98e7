"""Writes v6_store.db: a store as glmodel wrote it at schema version 6 (an option search's rounds only in its
campaigns' names: ``<name>``, ``<name>.more``, ``<name>.confirm``, ``<name>.confirm2``), with a search over
write-behind for 4 KB writes (write-behind off about 1.3x the defaults, as a made-up figure) and a training campaign whose name happens
to end in ``.more``.

Kept to show how the fixture was made; run with the release of schema version 6 (git e70ea56), never again."""

from __future__ import annotations

import sys
from pathlib import Path

from gluster_model.bench.engine import Measured
from gluster_model.config.cluster import cluster_from_data
from gluster_model.plan.factors import realize
from gluster_model.plan.file import PlanFile, expand
from gluster_model.plan.search import screening_points
from gluster_model.store import TrialRecord, open_store
from gluster_model.store.identity import CampaignInfo, Purpose
from gluster_model.store.store import now

out = Path(sys.argv[1])
cluster = cluster_from_data({"name": "lab", "servers": [{"host": f"10.9.0.{i}", "brick_paths": ["/b"]} for i in (1, 2)],
                             "clients": ["10.9.0.3"]}, "lab.yaml", Path("."))
search = PlanFile.model_validate({"name": "tune_x", "factors": {"record_size": "4KB", "write_behind": ["on", "off"]},
                                  "design": {"type": "search", "metric": "write", "budget": 20},
                                  "workload": {"tests": ["write"]}})
plain = PlanFile.model_validate({"name": "sweep", "factors": {"record_size": ["64KB", "1MB"]}})
defaults, off = (realize(p, search.workload, search.volume_options) for p in screening_points(search.factors))
# (campaign, plan, runs, purpose, trials per run, MB/s of the defaults and of write-behind off)
camps = [("tune_x@lab", search, [defaults, off], Purpose.SEARCH, 3, (100.0, 131.0)),
         ("tune_x@lab.more", search, [defaults, off], Purpose.SEARCH, 6, (101.0, 128.0)),
         ("tune_x@lab.confirm", search, [defaults, off], Purpose.SEARCH, 6, (99.0, 126.0)),
         ("tune_x@lab.confirm2", search, [off, defaults], Purpose.SEARCH, 6, (133.0, 102.0)),
         ("sweep@lab.more", plain, expand(plain, cluster).runs, Purpose.TRAINING, 3, (50.0, 60.0))]
with open_store(out) as st:
    for name, plan, runs, purpose, trials, (first, second) in camps:
        cid = st.ensure_campaign(name, plan.name, f"h-{plan.name}", plan.model_dump(mode="json"), "lab",
                                 {"name": "lab", "hosts": []}, "0.9.2", CampaignInfo(purpose, cluster="lab"))
        st.set_hardware_key(cid, "hw-lab")
        st.add_baselines("hw-lab", cid, [Measured("network", "10.9.0.3", "10.9.0.1", "write", 1e9, "bit/s")])
        status = st.register_runs(cid, runs)
        for i, r in enumerate(runs):
            rid = status[r.config_hash][0]
            st.start_run(rid)
            mbps = first if i == 0 else second
            for idx in range(trials):
                st.add_trial(rid, TrialRecord(idx=idx, warmup=False, status="ok", file_size=1 << 22, started_at=now(),
                                              seconds=2.0, engine_seconds=1.8, argv=["iozone"],
                                              measurements=[("write", 1000.0 * (mbps + idx - trials / 2), "kB/s",
                                                             None, None)], raw={"iozone": "x"}))
            st.finish_run(rid, "done", regime="direct")
