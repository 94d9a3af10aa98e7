"""`glmodel runs show`: one run's lines from typed store records, every measurement in its own unit."""

from __future__ import annotations

from gluster_model.present.runs import run_lines
from gluster_model.store.identity import RunStatus, StoredMeasurement, StoredRun, StoredTrial
from gluster_model.store.views import RunDetail


def _detail() -> RunDetail:
    run = StoredRun(7, 1, "p@c", 1, "h" * 12, "v", RunStatus.FAILED, 2, False, "direct",
                    {"layout": "replicate", "record_size": 4096}, {"volume": {}}, "no answer", "10.0.0.2",
                    "fio --client")
    ms = (StoredMeasurement("random_write", 2048.0, "kB/s", 1000.0, 1048.0),
          StoredMeasurement("random_write.iops", 512.4, "op/s"),
          StoredMeasurement("random_write.p99_us", 92800.0, "us", 90000.0, 92800.0),
          StoredMeasurement("file_create", 1234.5, "files/s"))
    trial = StoredTrial(3, 7, 0, False, True, "ok", None, 4 << 20, None, 18.0, 17.5, ("fio",),
                        {"disturbed": ["10.0.0.3: stress"]}, None, ms)
    return RunDetail(run, [trial], None)


def test_each_measurement_shows_in_its_unit_and_the_failure_names_its_host() -> None:
    lines = run_lines(_detail())
    assert lines[0] == "run 7 of p@c: failed, attempt 2, regime direct"
    assert lines[1] == "  error on 10.0.0.2: no answer" and lines[2] == "  command: fio --client"
    trial = lines[4]
    # kB/s as MB/s; IOPS, latency and files/s as measured, not divided as if they were kB/s
    assert "random_write 2.0 MB/s" in trial and "random_write.iops 512 op/s" in trial
    assert "random_write.p99_us 92,800 µs" in trial and "file_create 1,234 files/s" in trial
    assert "outlier" in trial and "4MB" in trial
    assert lines[5].strip() == "disturbed: 10.0.0.3: stress"

