"""The CPU score a host keeps under load when hosts of one machine share its cores (hardware/cpu_share.py),
against figures worked out by hand."""

from __future__ import annotations

import pytest

from gluster_model.hardware.cpu_share import load_factor, load_scores, machine_notes, scaled_quotas
from gluster_model.hardware.facts import HostFacts


def host(score: float, quota: float | None, boot: str | None = "m1", cpus: int = 2) -> HostFacts:
    return HostFacts(boot_id=boot, cpus=cpus, cpu_quota_cores=quota, cpu_score=score)


def test_quotas_that_fit_the_machine_keep_their_scores() -> None:
    """Four nodes at half a core on two cores ask for exactly the machine: nothing to share."""
    facts = {f"n{i}": host(170.0, 0.5) for i in range(4)}
    assert load_scores(facts) == {f"n{i}": 170.0 for i in range(4)}


def test_quotas_past_the_machine_share_its_cores() -> None:
    """Four nodes at a core each on two cores: each gets half a core under load, half of what its single-process
    score used alone; unlimited nodes the same; a quota past the one core the score uses changes nothing more."""
    for quota in (1.0, None, 2.0):
        facts = {f"n{i}": host(344.0, quota) for i in range(4)}
        assert load_scores(facts) == {f"n{i}": pytest.approx(172.0) for i in range(4)}, quota


def test_unequal_quotas_share_in_proportion() -> None:
    """Quotas 1, 1 and 0.25 on two cores ask 2.25: each keeps 2/2.25 of its quota (the scheduler's weights are
    equal, the quotas cap them)."""
    assert load_factor(1.0, 2, [1.0, 1.0, 0.25]) == pytest.approx(2 / 2.25)
    assert load_factor(0.25, 2, [1.0, 1.0, 0.25]) == pytest.approx(2 / 2.25)
    # three hosts at two cores each on four: 1.33 cores apiece under load, more than the one its score used
    assert load_factor(2.0, 4, [2.0, 2.0, 2.0]) == 1.0  # 4 x 2/6 = 1.33 cores: more than the score's one


def test_hosts_of_separate_machines_or_unknown_keep_their_scores() -> None:
    facts = {"a": host(300.0, None, boot="m1"), "b": host(300.0, None, boot="m2"), "c": host(250.0, None, boot=None),
             "d": host(250.0, None, boot=None)}
    assert load_scores(facts) == {"a": 300.0, "b": 300.0, "c": 250.0, "d": 250.0}
    assert "e" not in load_scores({**facts, "e": HostFacts(boot_id="m1", cpus=2)})  # no score: none under load


def test_a_quota_upgrade_of_every_host_gives_the_share_not_the_multiple() -> None:
    """The proof's today at 9% of two cores (0.18 core) a node, four nodes: x2 (1.44 cores asked) doubles the
    score; x4 (2.88 asked) gives each 0.5 core, 0.5 / 0.18 = 2.78 times; x8 the same."""
    today = {f"n{i}": host(62.0, 0.18) for i in range(4)}
    for scale, times in ((2, 2.0), (4, 0.5 / 0.18), (8, 0.5 / 0.18)):
        assert load_scores(scaled_quotas(today, scale))["n0"] == pytest.approx(62.0 * times), scale


def test_check_says_who_shares_a_machine_and_what_each_keeps() -> None:
    """``glmodel check``'s words for hosts of one machine: the others, the cores the quotas ask, the part kept."""
    facts = {"n1": host(344.0, 1.0), "n2": host(344.0, 1.0), "n3": host(344.0, 1.0), "n4": host(344.0, 1.0),
             "far": host(300.0, None, boot="m2")}
    notes = machine_notes(facts)
    assert set(notes) == {"n1", "n2", "n3", "n4"}  # a host alone on its machine has nothing to share
    assert notes["n1"] == ("shares one machine's 2 core(s) with n2, n3, n4: their CPU limits ask 4; under load it "
                           "keeps 50% of its CPU score alone")
