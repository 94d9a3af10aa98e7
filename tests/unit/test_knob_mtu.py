"""A knob set by commands on a host, in one module (hardware/knobs/mtu.py): found at import, parsed and shown
like every knob, a CLI option and a plan factor a cluster may emulate, never a share, and its commands quoted."""

from __future__ import annotations

from pathlib import Path

import pytest

from gluster_model.config.cluster import cluster_from_data
from gluster_model.hardware.knobs.mtu import KNOB, parse_mtu
from gluster_model.hardware.settings import EMULATED, KNOBS, OPTIONS, STEPPED, canonical, parse_setting
from gluster_model.plan.factors import LAB_FACTORS
from gluster_model.plan.file import PlanFile, expand


def test_the_mtu_knob_is_found_and_reaches_every_place_a_knob_is_named() -> None:
    assert STEPPED["mtu"] is KNOB and "mtu" in KNOBS and "mtu" in EMULATED and "mtu" in LAB_FACTORS
    assert any(k.name == "mtu" for k in OPTIONS)
    assert parse_setting("mtu", "9000") == {"mtu": 9000} and parse_setting("mtu", "default") == {"mtu": None}
    assert canonical("mtu", " 1400 ") == "1400"
    for bad in ("1279", "9001", "jumbo", "1500.5", "-1"):
        with pytest.raises(ValueError, match="is not an MTU"):
            parse_mtu(bad)


def test_its_commands_read_set_and_put_back_the_nic_and_refuse_what_was_not_read() -> None:
    step = KNOB.step
    assert step is not None
    assert step.apply(1400, "eth0", "/x/") == [["ip", "link", "set", "dev", "eth0", "mtu", "1400"]]
    assert step.restore("1500\n", "eth0", "/x/") == [["ip", "link", "set", "dev", "eth0", "mtu", "1500"]]
    assert step.read("eth0").startswith("ip -o link show dev eth0 |")
    assert "'a;b'" in step.read("a;b")  # quoted, should a name ever get here unchecked
    with pytest.raises(ValueError, match="could not be read"):
        step.restore("", "eth0", "/x/")
    with pytest.raises(ValueError, match="is not an MTU"):
        step.apply("20000", "eth0", "/x/")


def test_a_plan_sets_it_on_a_cluster_that_allows_emulation_never_as_a_share() -> None:
    allowed = cluster_from_data({"name": "real", "emulation": {"allow": True},
                                 "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]} for i in (1, 2)]},
                                "real.yaml", Path("."))
    plan = PlanFile.model_validate({"name": "m", "factors": {"mtu": [1400, 1500], "record_size": "1MB"}})
    assert sorted(dict(s)["mtu"] for s in expand(plan, allowed).lab_settings) == ["1400", "1500"]
    with pytest.raises(ValueError, match="mtu is not a share"):
        PlanFile.model_validate({"name": "m", "factors": {"mtu": ["50%"], "record_size": "1MB"}})
