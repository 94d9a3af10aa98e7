"""The line collect prints at the end of each campaign."""

from __future__ import annotations

from gluster_model.campaign.progress import CampaignSummary
from gluster_model.present.console import campaign_line


def test_a_campaign_line_says_what_its_setting_cost_before_the_first_run_once_one_ran() -> None:
    ran = CampaignSummary("hw@lab:link=1gbit", 2, done=2, trials=6, engine_seconds=100.0, wall_seconds=120.0,
                          baseline_seconds=9.0, first_run_seconds=12.4)
    line = campaign_line(ran)
    assert line.startswith("campaign hw@lab:link=1gbit: 2 run(s) done now, 0 before, 0 failed; 6 trial(s)")
    assert "9s baselines, the first run at 12s (wall/engine 1.20)" in line
    none_ran = CampaignSummary("hw", 1, failed=1, wall_seconds=3.0)
    assert "first run" not in campaign_line(none_ran) and "wall/engine" not in campaign_line(none_ran)
    assert campaign_line(CampaignSummary("hw", 3, already_done=3)) == \
        "campaign hw: all 3 run(s) already done; nothing to run"
