"""The hardware knob registry is the one place a knob is described: the CLI's lab options, the plan's hardware
factors, what a cluster can emulate and which measured input a knob moves all follow it."""

from __future__ import annotations

from click.testing import CliRunner

from gluster_model.cli import cli
from gluster_model.hardware.emulation import EMULATED
from gluster_model.hardware.settings import KNOB_LIST, KNOBS, PAIRS, knob_of, parse_setting
from gluster_model.model.features import SET_BY
from gluster_model.plan.factors import FACTORS, LAB_FACTORS


def test_every_knob_reaches_the_cli_the_plan_and_the_parser() -> None:
    shown = CliRunner().invoke(cli, ["lab", "node", "--help"]).output
    for k in KNOB_LIST:
        if k.option:
            assert f"--{k.name.replace('_', '-')} " in shown, k.name
            assert k.factor_name in LAB_FACTORS and FACTORS[k.factor_name].family == "lab"
        # a value knob parses its own text; a shorthand sets each of its knobs to the same value
        if k.parse is not None:
            assert k.name in KNOBS
        else:
            assert PAIRS[k.name] == k.sets and all(s in KNOBS for s in k.sets)
    assert FACTORS["brick_backing"].choices == ("dir", "ext4", "xfs", "tmpfs")
    assert knob_of("brick_backing") == "backing" and knob_of("disk_read") == "disk_read"
    assert parse_setting("disk", "40MB/s") == {"disk_read": 40_000_000, "disk_write": 40_000_000}


def test_what_a_knob_moves_and_where_it_can_be_emulated_follow_the_registry() -> None:
    from gluster_model.hardware.settings import STEPPED

    # not the backing; the knobs set by commands (hardware/knobs/) after the knobs with mechanisms of their own
    assert EMULATED == ("link", "disk", "disk_read", "disk_write", "disk_iops", "ram", "cpu", *STEPPED)
    assert list(STEPPED) == ["latency", "mtu"]  # in name order, one module each
    assert SET_BY["network_gbps"] == ("link",) and SET_BY["cpu_score"] == ("cpu",)
    assert set(SET_BY["disk_read_mbps"]) == {"backing", "brick_backing", "disk", "disk_read", "disk_iops",
                                             "disk_read_iops", "disk_write_iops"}
    assert "disk_read" not in SET_BY["disk_write_mbps"] and "link" not in SET_BY["disk_write_mbps"]
