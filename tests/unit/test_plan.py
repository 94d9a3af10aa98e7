"""Plans: designs over discrete levels, validation of plan files, expansion into ordered runs."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest

from gluster_model.config.cluster import cluster_from_data
from gluster_model.errors import ConfigError
from gluster_model.plan.design import (
    fractional,
    grid,
    grid_size,
    main_effects_matrix,
    n_main_effect_parameters,
    space_filling,
)
from gluster_model.plan.file import PlanFile, expand, load_plan
from pydantic import ValidationError

BAD = Path(__file__).parent.parent / "data" / "bad_plans"
SMOKE = Path(__file__).parent.parent.parent / "experiments" / "plans" / "smoke.yaml"


def _cluster(n: int = 3):  # type: ignore[no-untyped-def]
    return cluster_from_data({"name": "c", "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]}
                                                       for i in range(1, n + 1)],
                              "clients": [f"10.0.0.{i}" for i in range(1, n + 1)]}, "c.yaml", Path("."))


def test_grid_is_the_full_factorial() -> None:
    levels = {"a": [1, 2, 3], "b": ["x", "y"], "c": [True]}
    pts = grid(levels)
    assert len(pts) == grid_size(levels) == 6
    assert {(p["a"], p["b"]) for p in pts} == set(itertools.product([1, 2, 3], ["x", "y"]))


def test_two_level_fraction_keeps_main_effects_orthogonal() -> None:
    levels = {f"f{i}": [0, 1] for i in range(7)}  # 2^7 = 128 -> 2^(7-4) = 8 runs, resolution III
    pts = fractional(levels)
    assert len(pts) == 8 and len({tuple(p.values()) for p in pts}) == 8
    x = main_effects_matrix(pts, levels)
    # Orthogonal +/-1 columns: X'X = n I, so no main effect is aliased with another (or with the mean).
    assert np.allclose(x.T @ x, 8 * np.eye(8))
    five = fractional({f"f{i}": [0, 1] for i in range(5)})
    assert len(five) == 8 and np.linalg.matrix_rank(main_effects_matrix(five, {f"f{i}": [0, 1] for i in range(5)})) == 6


def test_mixed_level_fraction_is_estimable_and_seeded() -> None:
    levels = {"layout": ["distribute", "replicate", "disperse"], "rs": [4, 16, 64, 256], "threads": [1, 2, 4],
              "shard": [False, True]}
    pts = fractional(levels, seed=3)
    p = n_main_effect_parameters(levels)
    assert p == 1 + 2 + 3 + 2 + 1 and p <= len(pts) < grid_size(levels)
    assert np.linalg.matrix_rank(main_effects_matrix(pts, levels)) == p
    assert fractional(levels, seed=3) == pts  # the seed reproduces it
    with pytest.raises(ValueError, match="cannot estimate 9 main-effect parameters"):
        fractional(levels, n=5)


@pytest.mark.parametrize("kind,n", [("lhs", 8), ("sobol", 16)])
def test_space_filling_covers_every_level_and_reproduces(kind: str, n: int) -> None:
    levels = {"rs": [4, 16, 64, 256], "threads": [1, 2, 4, 8], "layout": ["a", "b"], "cache": [1, 2, 3, 4, 5, 6, 7, 8]}
    pts = space_filling(levels, kind, n, seed=11)  # type: ignore[arg-type]
    assert len(pts) == n
    for name, lv in levels.items():
        assert {p[name] for p in pts} == set(lv), name
    assert space_filling(levels, kind, n, seed=11) == pts  # type: ignore[arg-type]
    assert space_filling(levels, kind, n, seed=12) != pts  # type: ignore[arg-type]


@pytest.mark.parametrize("path", sorted(BAD.glob("*.yaml")), ids=lambda p: p.stem)
def test_bad_plans_refused_with_one_line(path: Path) -> None:
    expected = path.read_text().splitlines()[0].removeprefix("# expect: ")
    with pytest.raises(ConfigError) as info:
        load_plan(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    assert expected in message, message


def test_expand_orders_by_volume_merges_and_skips() -> None:
    plan = PlanFile.model_validate({
        "name": "t",
        "factors": {"layout": ["replicate", "distribute"], "replica": [2, 3], "record_size": ["4KB", "64KB"],
                    "servers": [2, 3]},
    })
    ex = expand(plan, _cluster(3))
    # distribute ignores replica: its 2 replica levels merge (2 servers x 2 rs = 4 duplicates merged).
    assert ex.duplicates == 4
    # replica 3 on 2 servers is impossible: set aside with the reason, before anything remote.
    assert len(ex.skipped) == 2 and all("replica 3 needs at least 3 servers" in why for _, why in ex.skipped)
    assert len(ex.runs) == 4 * 2 - 2 + 2 * 2
    keys = [r.volume_key for r in ex.runs]
    assert keys == sorted(keys, key=keys.index)  # each volume's runs are adjacent
    assert len(ex.volumes) == 5 and len(set(r.config_hash for r in ex.runs)) == len(ex.runs)
    rep = [r for r in ex.runs if r.features["layout"] == "replicate"][0]
    assert rep.volume.name == f"gm{rep.volume_key[:10]}" and rep.volume.replica == rep.features["replica"]


def test_expand_refuses_a_plan_with_no_possible_point() -> None:
    plan = PlanFile.model_validate({"name": "t", "factors": {"layout": "replicate", "replica": 3, "servers": 2}})
    with pytest.raises(ConfigError, match="no point of the design can run on c: replica 3 needs at least 3"):
        expand(plan, _cluster(2))


def _lab_cluster():  # type: ignore[no-untyped-def]
    return cluster_from_data({"name": "lab", "lab": {"state_dir": "."},
                              "servers": [{"host": f"127.1.1.{i}", "brick_paths": ["/b"]} for i in (1, 2, 3)]},
                             "lab.yaml", Path("."))


def test_lab_factors_group_runs_by_setting_and_keep_other_hashes() -> None:
    plan = PlanFile.model_validate({
        "name": "hw", "design": {"type": "grid"},
        "factors": {"record_size": ["4KB", "64KB"], "link": ["1Gbit", "unlimited"], "brick_backing": ["xfs", "ext4"]},
    })
    ex = expand(plan, _lab_cluster())
    assert len(ex.runs) == 8
    assert ex.lab_settings == [(("link", "1gbit"), ("brick_backing", "xfs")),
                               (("link", "1gbit"), ("brick_backing", "ext4")),
                               (("link", "unlimited"), ("brick_backing", "xfs")),
                               (("link", "unlimited"), ("brick_backing", "ext4"))]
    settings = [r.lab for r in ex.runs]
    assert settings == sorted(settings, key=settings.index)  # each setting's runs are adjacent
    part = ex.with_setting(ex.lab_settings[1])
    assert len(part.runs) == 2 and all(r.features["brick_backing"] == "ext4" for r in part.runs)
    # The same volume on other hardware is another volume, and another run.
    assert len(ex.volumes) == 4 and len({r.config_hash for r in ex.runs}) == 8
    # A plan without lab factors keeps the hashes it always had (stores stay resumable).
    plain = expand(PlanFile.model_validate({"name": "p", "factors": {"record_size": ["4KB", "64KB"]}}), _lab_cluster())
    assert ex.lab_settings and plain.lab_settings == [()]
    same = [r for r in ex.runs if r.lab == ex.lab_settings[0]]
    assert {r.volume_key for r in plain.runs}.isdisjoint({r.volume_key for r in same})
    assert plain.runs[0].volume_key == plan_volume_key_without_lab(plain)


def plan_volume_key_without_lab(ex):  # type: ignore[no-untyped-def]
    from gluster_model.plan.factors import digest

    body = ex.runs[0].volume.model_dump(exclude={"name"}, mode="json")
    return digest(body)


@pytest.mark.parametrize("factor, level", [("link", "1gbit"), ("brick_backing", "xfs")])
def test_hardware_factors_refused_on_a_cluster_that_does_not_allow_emulation(factor: str, level: str) -> None:
    plan = PlanFile.model_validate({"name": "hw", "factors": {factor: level, "record_size": "4KB"}})
    with pytest.raises(ConfigError, match=f"factors.{factor}.*does not allow glmodel to change its hardware; "
                                          f"set `emulation: {{allow: true}}`"):
        expand(plan, _cluster(3))


def test_a_cluster_that_allows_emulation_takes_link_disk_ram_cpu_and_refuses_the_rest() -> None:
    allowed = cluster_from_data({"name": "real", "emulation": {"allow": True},
                                 "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]} for i in (1, 2, 3)]},
                                "real.yaml", Path("."))
    link = PlanFile.model_validate({"name": "hw", "factors": {"link": ["300mbit", "1gbit"], "record_size": "4KB"}})
    assert sorted(dict(s)["link"] for s in expand(link, allowed).lab_settings) == ["1gbit", "300mbit"]
    hw = PlanFile.model_validate({"name": "hw", "factors": {"link": "1gbit", "disk": "60MB/s", "ram": "2GB", "cpu": 0.5,
                                                           "record_size": "4KB"}})
    assert expand(hw, allowed).lab_settings == [(("link", "1gbit"), ("disk", "60MB/s"), ("ram", "2GB"),
                                                 ("cpu", "0.5"))]
    backing = PlanFile.model_validate({"name": "hw", "factors": {"brick_backing": "xfs", "record_size": "4KB"}})
    with pytest.raises(ConfigError, match="factors.brick_backing.*emulates link, disk, disk_read, disk_write, "
                                          "disk_iops, ram, cpu, latency(, [a-z_]+)* only"):  # and any plugged knob
        expand(backing, allowed)
    # a delay is a value, never a share of a host's hardware
    with pytest.raises(ValueError, match="latency is not a share"):
        PlanFile.model_validate({"name": "hw", "factors": {"latency": ["50%"], "record_size": "4KB"}})


def test_the_bottleneck_plan_is_shares_of_each_host_and_only_for_clusters() -> None:
    """The shipped plan: 12 settings of shares (100% is the host as it is); refused on a lab, whose settings are
    absolute, and on a cluster that does not allow emulation."""
    plan = load_plan(SMOKE.parent / "bottleneck.yaml")
    allowed = cluster_from_data({"name": "real", "emulation": {"allow": True},
                                 "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]} for i in (1, 2)]},
                                "real.yaml", Path("."))
    settings = [dict(s) for s in expand(plan, allowed).lab_settings]
    assert len(settings) == 12 and settings[0] == {"link": "100%", "disk": "100%", "ram": "100%", "cpu": "100%"}
    assert {"link": "25%", "disk": "100%", "ram": "100%", "cpu": "100%"} in settings
    with pytest.raises(ConfigError, match=r"factors.link: '25%' is a share of each host's own hardware"):
        expand(plan, _lab_cluster())
    with pytest.raises(ConfigError, match="does not allow glmodel to change its hardware"):
        expand(plan, _cluster(2))
    with pytest.raises(ValueError, match="from 1% to 100%"):  # the plan file itself is refused
        PlanFile.model_validate({"name": "x", "factors": {"link": "150%", "record_size": "4KB"}})


@pytest.mark.parametrize("variant", [None, "random", "quick"])
def test_the_ops_bottleneck_plan_moves_round_trips_cpu_and_link_on_a_cluster(variant: str | None) -> None:
    """The small-file and random-I/O bottleneck plan: 8 settings that vary the added delay, the CPU share and the
    link (each alone, and together), the round trip's input moved by more than noise."""
    plan = load_plan(SMOKE.parent / "bottleneck_ops.yaml", variant)
    allowed = cluster_from_data({"name": "real", "emulation": {"allow": True},
                                 "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]} for i in (1, 2)]},
                                "real.yaml", Path("."))
    ex = expand(plan, allowed)
    settings = [dict(s) for s in ex.lab_settings]
    assert len(settings) == 8 and len({tuple(sorted(s.items())) for s in settings}) == 8
    for knob in ("latency", "cpu", "link"):  # each knob at two levels or more, so its stage can enter a model
        assert len({s[knob] for s in settings}) >= 2, knob
    tests = {t for r in ex.runs for t in r.workload.tests}
    assert tests == ({"random"} if variant == "random" else {"file_create", "file_stat"})


@pytest.mark.parametrize("factor, level, why", [("link", "fast", "not a link rate"),
                                                ("link", "1gbps", "in bits"),
                                                ("brick_backing", "zfs", "not one of dir, ext4, xfs, tmpfs")])
def test_bad_lab_levels(factor: str, level: str, why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        PlanFile.model_validate({"name": "hw", "factors": {factor: level}})


def test_smoke_plan_shape() -> None:
    ex = expand(load_plan(SMOKE), _cluster(3))
    assert len(ex.runs) == 6 and len(ex.volumes) == 2
    assert {r.features["record_size"] for r in ex.runs} == {16 << 10, 128 << 10, 1 << 20}


def test_readme_plan_example_is_valid() -> None:
    readme = (Path(__file__).parent.parent.parent / "docs" / "reference.md").read_text()
    start = readme.index("```yaml", readme.index("## Plan file")) + len("```yaml")
    import yaml

    plan = PlanFile.model_validate(yaml.safe_load(readme[start: readme.index("```", start)]))
    assert plan.protocol.remount == "run" and len(plan.factors) == 16
    assert plan.factors["engine"] == ["iozone"] and plan.factors["read_hash_mode"] == ["1", "3"]


def _nested_plan(**design: object) -> PlanFile:
    return PlanFile.model_validate({
        "name": "hw", "design": {"type": "lhs", "n": 4, "seed": 3, "hardware": {"type": "lhs", "n": 8, "seed": 5},
                                 **design},
        "factors": {"link": ["200mbit", "400mbit", "700mbit", "1gbit"], "disk": ["30MB/s", "60MB/s", "120MB/s"],
                    "ram": ["512MB", "1GB", "2GB"], "cpu": ["0.25", "0.5", "1"],
                    "layout": ["distribute", "replicate"], "replica": [2, 3], "servers": [1, 2, 3],
                    "file_size": ["16MB", "64MB"]},
    })


def test_nested_design_varies_hardware_independently_and_fills_each_setting() -> None:
    from gluster_model.plan.design import max_correlation

    plan = _nested_plan()
    ex = expand(plan, _lab_cluster())
    assert len(ex.lab_settings) == 8  # every hardware setting a campaign of its own
    # Every setting holds n buildable runs although replica 3 on 1-2 servers is impossible (topped up).
    assert all(len(ex.with_setting(s).runs) == 4 for s in ex.lab_settings)
    assert not ex.skipped
    outer = {k: v for k, v in plan.factors.items() if k in ("link", "disk", "ram", "cpu")}
    settings = [dict(s) for s in ex.lab_settings]
    assert max_correlation(settings, outer) < 0.3
    # ... and the correlation across runs is the same: each setting has the same number of runs.
    runs = [{k: r.features[k] for k in outer} for r in ex.runs]
    assert max_correlation(runs, outer) < 0.3
    # The inner points differ between settings (re-seeded), so workload is not tied to hardware either.
    inner = [tuple(sorted((k, str(r.features.get(k))) for k in ("servers", "file_size", "layout")))
             for r in ex.runs]
    assert len(set(inner)) > 4
    # Seeded: the same plan expands to the same runs.
    assert [r.config_hash for r in expand(plan, _lab_cluster()).runs] == [r.config_hash for r in ex.runs]


def test_low_correlation_beats_a_plain_lhs() -> None:
    from gluster_model.plan.design import low_correlation, max_correlation, space_filling

    levels = {"a": [1, 2, 3, 4], "b": [1, 2, 3, 4], "c": [1, 2, 3], "d": [1, 2, 3]}
    plain = [max_correlation(space_filling(levels, "lhs", 12, s), levels) for s in range(20)]
    chosen = max_correlation(low_correlation(levels, "lhs", 12, 0), levels)
    assert chosen < 0.3 and chosen <= min(plain)
    assert max(plain) > 0.3  # what a single draw risks


@pytest.mark.parametrize("design, problem", [
    ({"hardware": {"type": "lhs"}}, r"needs n \(the number of hardware settings\)"),
    ({"type": "adaptive", "budget": 10, "hardware": {"type": "lhs", "n": 4}}, "cannot be nested"),
])
def test_bad_nested_designs(design: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        _nested_plan(**design)


def test_nested_design_needs_a_varied_lab_factor() -> None:
    plan = PlanFile.model_validate({"name": "p", "design": {"type": "grid", "hardware": {"type": "grid"}},
                                    "factors": {"record_size": ["4KB", "64KB"], "link": "1gbit"}})
    with pytest.raises(ConfigError, match="design: a hardware design needs at least one lab factor"):
        expand(plan, _lab_cluster())


def test_a_list_hardware_design_builds_exactly_the_settings_given() -> None:
    """Settings chosen to cover a question: each becomes a campaign, in order, with its inner design; a setting
    that leaves out a factor the plan varies, or names one that is not lab hardware, is refused in one line."""
    from gluster_model.plan.file import PlanFile, design_points

    base = {"name": "cover", "factors": {"link": ["200mbit", "1gbit"], "disk": ["30MB/s", "240MB/s"],
                                       "servers": [1, 2, 3], "file_size": "32MB"}}
    settings = [{"link": "1gbit", "disk": "240MB/s"}, {"link": "200mbit", "disk": "240MB/s"}]
    plan = PlanFile.model_validate({**base, "design": {"type": "lhs", "n": 2, "seed": 3,
                                                        "hardware": {"type": "list", "settings": settings}}})
    points = design_points(plan)
    got = list(dict.fromkeys((p["link"], p["disk"]) for p in points))
    assert got == [("1gbit", "240MB/s"), ("200mbit", "240MB/s")] and len(points) == 4
    with pytest.raises(ValueError, match="every hardware setting must give disk"):
        design_points(PlanFile.model_validate({**base, "design": {"type": "lhs", "n": 2, "hardware": {
            "type": "list", "settings": [{"link": "1gbit"}]}}}))
    for hw, says in (({"type": "list", "settings": [{"servers": 2}]}, "'servers' is not a lab hardware factor"),
                     ({"type": "list"}, "a hardware design of type list needs settings"),
                     ({"type": "list", "settings": [{"link": "fast"}]}, "settings[0].link")):
        with pytest.raises(ValueError, match=re.escape(says)):
            PlanFile.model_validate({**base, "design": {"type": "lhs", "n": 2, "hardware": hw}})


@pytest.mark.parametrize("factor, levels", [("servers", [2, 5]), ("clients", [1, 4])])
def test_a_recipe_for_a_larger_cluster_adapts_and_says_so(factor: str, levels: list[int]) -> None:
    """Levels the cluster cannot hold are left out of the design, said in the plan's notes (the dry run prints
    them); a plan none of whose levels fit is a mistake, refused in one line."""
    plan = PlanFile.model_validate({"name": "t", "factors": {"layout": "distribute", factor: levels}})
    ex = expand(plan, _cluster(3), "plan.yaml")
    assert ex.notes == [f"{factor} {levels[1]} left out of the design: c has 3"]
    assert {r.features[factor] for r in ex.runs} == {levels[0]}
    too_big = PlanFile.model_validate({"name": "t", "factors": {"layout": "distribute", factor: [7, 9]}})
    with pytest.raises(ConfigError) as info:
        expand(too_big, _cluster(3), "plan.yaml")
    message = str(info.value)
    assert "\n" not in message and "plan.yaml" in message and f"factors.{factor}" in message
    assert f"level 7 asks for more {factor} than c has (3); allowed: 1 to 3" in message


def test_a_level_invalid_on_its_own_is_refused_naming_the_factor() -> None:
    plan = PlanFile.model_validate({"name": "t", "factors": {"layout": "distribute", "threads": [1, 5000]}})
    with pytest.raises(ConfigError) as info:
        expand(plan, _cluster(3), "plan.yaml")
    assert str(info.value) == "plan.yaml: factors.threads: level 5000: Input should be less than or equal to 1024"


def test_a_subset_measures_again_a_seeded_sample_of_the_designs_runs() -> None:
    """Replicates: ``subset: k`` keeps k of the full design's runs, the very same config hashes, the same k each
    time, and an adaptive design (which has no runs to sample) refuses it."""
    factors = {"record_size": ["4KB", "64KB", "1MB"], "io_cache": ["on", "off"], "cache_size": ["4MB", "64MB"],
               "file_size": "16MB", "servers": [1, 2]}
    full = expand(PlanFile.model_validate({"name": "p", "factors": factors,
                                           "design": {"type": "lhs", "n": 12, "seed": 5}}), _cluster())
    design = {"type": "lhs", "n": 12, "seed": 5, "subset": 4}
    part = expand(PlanFile.model_validate({"name": "p", "factors": factors, "design": design}), _cluster())
    again = expand(PlanFile.model_validate({"name": "p", "factors": factors, "design": design}), _cluster())
    hashes = [r.config_hash for r in part.runs]
    assert len(hashes) == 4 and set(hashes) <= {r.config_hash for r in full.runs}
    assert hashes == [r.config_hash for r in again.runs]
    other = expand(PlanFile.model_validate({"name": "p", "factors": factors,
                                            "design": {**design, "seed": 6}}), _cluster())
    assert {r.config_hash for r in other.runs} != set(hashes)  # another seed, another design and sample
    with pytest.raises(ValueError, match="adaptive design .* no set of runs to sample"):
        PlanFile.model_validate({"name": "p", "factors": factors,
                                 "design": {"type": "adaptive", "budget": 6, "subset": 3}})
    shipped = load_plan(Path(__file__).parents[2] / "experiments" / "plans" / "gluster_config.yaml", "replicates")
    base = load_plan(Path(__file__).parents[2] / "experiments" / "plans" / "gluster_config.yaml")
    lab = cluster_from_data({"name": "lab", "lab": {"state_dir": "."},
                             "servers": [{"host": f"127.1.1.{i}", "brick_paths": ["/b"]} for i in range(1, 5)],
                             "clients": [f"127.1.1.{i}" for i in range(1, 5)]}, "lab.yaml", Path("."))
    reps = {r.config_hash for r in expand(shipped, lab).runs}
    assert len(reps) == 16 and reps <= {r.config_hash for r in expand(base, lab).runs}


def test_the_verify_variant_changes_only_how_often_each_run_is_measured() -> None:
    """hardware_emulated's ``verify3``: the training protocol with three trials a run, nothing else, so a
    verification with it measures what the model was fitted on, three times."""
    path = Path(__file__).parents[2] / "experiments" / "plans" / "hardware_emulated.yaml"
    base, three = load_plan(path), load_plan(path, "verify3")
    assert three.protocol.repetitions == 3 and base.protocol.repetitions == 1
    assert three.protocol.model_dump(exclude={"repetitions"}) == base.protocol.model_dump(exclude={"repetitions"})
    for part in ("factors", "design", "workload", "volume_options", "baselines"):
        assert getattr(three, part) == getattr(base, part), part


def test_the_dry_run_counts_skipped_points_by_reason_in_words() -> None:
    from gluster_model.present.campaign import skipped_lines

    skipped = [({"servers": 2, "replica": 3, "file_size": 1 << 30}, "replica 3 needs at least 3 servers; 2 in use"),
               ({"servers": 1, "replica": 2, "file_size": 1 << 20}, "replica 2 needs at least 2 servers; 1 in use"),
               ({"servers": 1, "threads": 9}, "9 threads on 1 client")]
    lines = skipped_lines(skipped)
    assert lines[0] == "  3 design point(s) skipped, the cluster cannot run them:"
    assert lines[1] == "    2 like: replica 3 needs at least 3 servers; 2 in use (servers=2, replica=3)"
    assert lines[2] == "    1 like: 9 threads on 1 client (threads=9)"
    assert not any("{" in line for line in lines)
