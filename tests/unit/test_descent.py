"""A descent over hardware settings (campaign.descent, design.hardware.descend): which settings are its steps,
how far a metric fell, when a knob's descent is done, and what a plan may say."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from gluster_model.campaign.descent import Descent, falls, steps_of
from gluster_model.config.cluster import ClusterSpec, cluster_from_data
from gluster_model.errors import ConfigError
from gluster_model.plan.file import expand, load_plan


@pytest.fixture
def emulating() -> ClusterSpec:
    return cluster_from_data({"name": "real", "emulation": {"allow": True},
                              "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]} for i in (1, 2, 3)]},
                             "real.yaml", Path("."))


def test_a_step_is_today_with_exactly_one_descending_knob_changed() -> None:
    today = (("link", "100%"), ("cpu", "100%"))
    settings = [today, (("link", "100%"), ("cpu", "50%")), (("link", "50%"), ("cpu", "100%")),
                (("link", "50%"), ("cpu", "50%")), (("link", "100%"), ("cpu", "100%"), ("latency", "1ms"))]
    assert steps_of(settings, ["cpu", "link"]) == {settings[1]: "cpu", settings[2]: "link"}
    assert steps_of(settings, ["cpu"]) == {settings[1]: "cpu"}  # the link's setting is a plain one
    assert steps_of(settings, ["latency"]) == {settings[4]: "latency"}  # a knob today leaves unset
    assert steps_of([], ["cpu"]) == {} and steps_of(settings, []) == {}


def test_a_fall_is_one_minus_the_geometric_mean_ratio_over_runs_measured_on_both_sides() -> None:
    today = {"a": {"write": 100.0, "read": 200.0}, "b": {"write": 50.0}}
    step = {"a": {"write": 50.0, "read": 220.0}, "b": {"write": 50.0}, "c": {"write": 1.0}}
    got = falls(today, step)
    assert got["write"] == pytest.approx(1 - math.sqrt(0.5 * 1.0))  # runs a and b; c has no today
    assert got["read"] == pytest.approx(-0.1)  # a rise is a negative fall
    assert falls(today, {"a": {"write": 0.0}}) == {}  # nothing measured is no ratio
    assert falls({}, step) == {}


def test_a_knob_is_done_once_every_metric_bound_past_plus_one_times() -> None:
    d = Descent("cpu", ("read", "write"), binds=0.15, past=1)
    assert d.record("c50", {"write": 0.30, "read": 0.05}) == ["write"] and not d.done
    assert d.record("c25", {"write": 0.60, "read": 0.16}) == ["read", "write"] and not d.done  # read once
    assert d.record("c12", {"write": 0.80, "read": 0.40}) == ["read", "write"] and d.done
    assert d.bound == {"write": ["c50", "c25", "c12"], "read": ["c25", "c12"]}
    assert Descent("cpu", ("write",), 0.15, 0).record("x", {"write": 0.149}) == []
    # a metric missing at a setting did not bind there; no metric today at all: never done
    assert not Descent("cpu", (), 0.15, 0).done
    # a setting that measured nothing (every run failed): the levels below it are left out
    failed = Descent("cpu", ("write",), 0.15, 1)
    assert failed.record("c6", {"read": 0.5}) == [] and failed.done and failed.failed_at == "c6"


PLAN = {"name": "d", "factors": {"link": ["100%"], "cpu": ["100%"], "file_size": "4MB", "record_size": "1MB",
                                 "threads": 2},
        "design": {"type": "grid", "hardware": {"type": "list", "settings": [{"link": "100%", "cpu": "100%"}],
                                                "descend": {"cpu": ["50%", "25%"], "link": ["50%"]}}},
        "workload": {"tests": ["write"]}}


def _plan(tmp_path: Path, doc: dict[str, object]) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_descent_plan_expands_today_then_each_knob_s_levels_in_order(tmp_path: Path, emulating: ClusterSpec
                                                                       ) -> None:
    plan = load_plan(_plan(tmp_path, PLAN))
    settings = expand(plan, emulating).lab_settings
    assert [dict(s) for s in settings] == [{"link": "100%", "cpu": "100%"}, {"link": "100%", "cpu": "50%"},
                                           {"link": "100%", "cpu": "25%"}, {"link": "50%", "cpu": "100%"}]


@pytest.mark.parametrize("change, says", [
    ({"type": "lhs", "n": 3, "settings": []}, "descend lowers the first setting of a list"),
    ({"descend": {"color": ["red"]}}, "'color' is not a lab hardware factor"),
    ({"descend": {"cpu": []}}, "descend.cpu: give a list of levels"),
    ({"descend": {"ram": ["1GB"]}}, "descend lowers ram, which the plan's factors do not give"),
    ({"binds": 1.5}, "binds"),
    ({"past": -1}, "past"),
])
def test_a_descent_that_cannot_run_is_one_line_naming_it(tmp_path: Path, emulating: ClusterSpec,
                                                         change: dict[str, object], says: str) -> None:
    doc = yaml.safe_load(yaml.safe_dump(PLAN))
    doc["design"]["hardware"].update(change)
    with pytest.raises(ConfigError) as err:
        expand(load_plan(_plan(tmp_path, doc)), emulating)
    assert says in str(err.value) and "\n" not in str(err.value)


def _shipped_plans() -> list[tuple[Path, str | None]]:
    root = Path(__file__).resolve().parents[2] / "experiments"
    out: list[tuple[Path, str | None]] = []
    for path in sorted(root.rglob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if isinstance(doc, dict) and "factors" in doc:
            out += [(path, None), *((path, v) for v in doc.get("variants") or {})]
    return out


@pytest.mark.parametrize("path, variant", _shipped_plans(), ids=lambda p: getattr(p, "stem", p))
def test_every_shipped_plan_and_variant_loads(path: Path, variant: str | None) -> None:
    """The descents added to shipped plans (bottleneck, bottleneck_ops, the stages proof) and every other plan and
    variant are plans glmodel reads; a descent's first setting is today and its steps lower one knob each."""
    plan = load_plan(path, variant)
    hw = plan.design.hardware
    if hw is not None and hw.descend:
        settings = hw.all_settings({})
        steps = steps_of([tuple(sorted((k, str(v)) for k, v in s.items())) for s in settings], list(hw.descend))
        assert len(steps) == sum(len(v) for v in hw.descend.values())


def test_a_bounded_answer_says_what_no_measurement_showed() -> None:
    from gluster_model.predict.whatif import stage_cautions

    assert stage_cautions(10.0, 4.0, "server disks", set(), []) == []  # every stage bound somewhere
    assert stage_cautions(7.9, 4.0, "server disks", set(), ["CPU"]) == []  # within twice the most measured
    far = stage_cautions(8.1, 4.0, "server disks", set(), ["CPU", "round trips"])
    assert far == ["2.0x the most any run measured, and the CPU and the round trips bound no setting: they may "
                   "stop the gain sooner (a descent of CPU and delay measures them: docs/reference.md)"]
    assumed = stage_cautions(5.0, 4.0, "client links", {"client links"}, [])
    assert assumed == ["after it the client links bind, which bound no setting measured: their efficiency is "
                       "assumed"]
    assert stage_cautions(5.0, 0.0, "client links", set(), ["CPU"]) == []  # nothing measured to compare with
    prior = stage_cautions(5.0, 4.0, "client CPU", {"client CPU"}, [])
    assert prior == ["after it the client CPU bind, which no two settings measured made bind: its capacity is the "
                     "lab's calibrated cost of an operation, not measured here (docs/reference.md)"]
