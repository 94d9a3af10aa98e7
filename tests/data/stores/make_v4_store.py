"""Writes v4_store.db: a store as glmodel wrote it at schema version 4 (before campaigns had purpose and setting
columns): a hardware plan's two settings and its drift campaign, a verification, a search and a plain campaign.

Kept to show how the fixture was made; run with the release of schema version 4 (git 7af4845), never again."""

from __future__ import annotations

import sys
from pathlib import Path

from gluster_model.bench.engine import Measured
from gluster_model.config.cluster import cluster_from_data
from gluster_model.plan.file import PlanFile, expand
from gluster_model.store import TrialRecord, open_store
from gluster_model.store.store import now

out = Path(sys.argv[1])
cluster = cluster_from_data({"name": "lab", "servers": [{"host": f"10.9.0.{i}", "brick_paths": ["/b"]} for i in (1, 2)],
                             "clients": ["10.9.0.3"]}, "lab.yaml", Path("."))
plain = PlanFile.model_validate({"name": "hw", "factors": {"record_size": ["64KB", "1MB"]}})
search = PlanFile.model_validate({"name": "tune_x", "design": {"type": "search", "metric": "write"},
                                  "factors": {"record_size": ["64KB", "1MB"]}})
runs = expand(plain, cluster).runs
camps = [("hw@lab:link=1gbit,disk=60MB/s", "hw", plain, 1.0), ("hw@lab:link=100mbit,disk=60MB/s", "hw", plain, 0.1),
         ("hw@lab:link=1gbit,disk=60MB/s,again", "hw", plain, 1.03), ("verify.hw@lab:link=500mbit", "verify.hw", plain, 0.5),
         ("tune_x@lab:link=1gbit", "tune_x", search, 0.9), ("study@prod", "study", plain, 2.0)]
with open_store(out) as st:
    for name, plan_name, plan, scale in camps:
        cid = st.ensure_campaign(name, plan_name, f"h-{plan_name}", plan.model_dump(mode="json"),
                                 name.partition("@")[2].partition(":")[0],
                                 {"name": "lab", "hosts": []}, "0.9.0")
        key = f"hw-{name}"
        st.set_hardware_key(cid, key)
        st.add_baselines(key, cid, [Measured("network", "10.9.0.3", "10.9.0.1", "write", scale * 1e9, "bit/s")])
        status = st.register_runs(cid, runs)
        for i, r in enumerate(runs):
            rid = status[r.config_hash][0]
            st.start_run(rid)
            for idx in range(3):
                st.add_trial(rid, TrialRecord(idx=idx, warmup=False, status="ok", file_size=1 << 22, started_at=now(),
                                              seconds=2.0, engine_seconds=1.8, argv=["iozone"],
                                              measurements=[("write", 1024.0 * 100 * scale * (1 + i) + idx, "kB/s",
                                                             None, None)], raw={"iozone": "x"}))
            st.finish_run(rid, "done", regime="direct")
