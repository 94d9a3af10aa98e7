"""Check a model's answers by measuring them: build each scenario of a what-if question on a cluster, measure it
with the protocol of the training data, and set prediction beside measurement.

The steps:

1. every scenario becomes a run of the training plan (its fixed factors, protocol and baselines), with the
   scenario's layout, servers, clients and workload; on a glmodel lab also its hardware, from the scenario's
   ``lab:`` settings or translated from the inputs it sets (link from ``network_gbps``, disk rates from
   ``disk_*_mbps``, RAM from ``client_ram_gb``). A real cluster builds only what it can: a scenario that
   changes hardware there is skipped, with the reason;
2. the runs are collected as campaigns of their own (``verify.<plan>`` plans), which ``glmodel fit`` never
   pools with training data, and an interrupted verification resumes like any campaign;
3. the model predicts each scenario at the hardware *as measured* by the verification campaign's baselines
   (a 1 Gbit/s link that measures 0.95 is predicted at 0.95), so the check is of the model, not of how well a
   setting hits its nominal value; the basis (measured / interpolated / bounded / extrapolated) is the predictor's;
4. per metric: absolute percentage error per scenario, MAPE, the share of measurements inside the prediction
   intervals (coverage), and whether the candidate with the best predicted gain per price also measured best.

The steps live in build.py (1), measure.py (2) and compare.py (3, 4; its references there).
"""

from .build import (FACTOR_INPUTS, MEASURED_INPUTS, SAME_SETTING, Target, Work, lab_settings, prepare, scenario_point,
                    set_apart, targets, verification_plan)
from .compare import Check, MetricVerdict, Verification, compare
from .measure import from_store, measured_frame, stored_cluster, verify

__all__ = ["FACTOR_INPUTS", "MEASURED_INPUTS", "SAME_SETTING", "Check", "MetricVerdict", "Target", "Verification",
           "Work", "compare", "from_store", "lab_settings", "measured_frame", "prepare", "scenario_point",
           "set_apart", "stored_cluster", "targets", "verification_plan", "verify"]
