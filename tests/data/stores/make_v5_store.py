"""Writes v5_store.db: a store as glmodel wrote it at schema version 5 (campaigns with purpose, setting and
again_of columns, but an interleaved comparison's side and look only in its campaigns' names, `<base>.A1`):
a plain campaign and the four looks of a write-behind comparison (A B B A).

Kept to show how the fixture was made; run with the release of schema version 5 (git 2cf4bcd), never again."""

from __future__ import annotations

import sys
from pathlib import Path

from gluster_model.bench.engine import Measured
from gluster_model.config.cluster import cluster_from_data
from gluster_model.plan.file import PlanFile, expand, side_runs
from gluster_model.store import TrialRecord, open_store
from gluster_model.store.identity import CampaignInfo, Purpose
from gluster_model.store.store import now

out = Path(sys.argv[1])
cluster = cluster_from_data({"name": "lab", "servers": [{"host": f"10.9.0.{i}", "brick_paths": ["/b"]} for i in (1, 2)],
                             "clients": ["10.9.0.3"]}, "lab.yaml", Path("."))
plain = PlanFile.model_validate({"name": "hw", "factors": {"record_size": ["64KB", "1MB"]}})
sides = PlanFile.model_validate({"name": "regression", "design": {"type": "grid", "sides": "write_behind", "looks": 2},
                                 "factors": {"record_size": ["64KB", "1MB"], "write_behind": ["on", "off"]}})
both = expand(sides, cluster)
camps = [("hw@lab", "hw", plain, expand(plain, cluster).runs, Purpose.TRAINING, 1.0)]
for label, look in (("A", 1), ("B", 1), ("B", 2), ("A", 2)):
    level = sides.factors["write_behind"][0 if label == "A" else 1]
    camps.append((f"regression@lab.{label}{look}", "regression", sides, side_runs(both, "write_behind", level).runs,
                  Purpose.COMPARISON, 1.0 if label == "A" else 0.8))
with open_store(out) as st:
    for name, plan_name, plan, runs, purpose, scale in camps:
        cid = st.ensure_campaign(name, plan_name, f"h-{plan_name}", plan.model_dump(mode="json"), "lab",
                                 {"name": "lab", "hosts": []}, "0.9.1", CampaignInfo(purpose, cluster="lab"))
        key = "hw-lab"
        st.set_hardware_key(cid, key)
        st.add_baselines(key, cid, [Measured("network", "10.9.0.3", "10.9.0.1", "write", 1e9, "bit/s")])
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
