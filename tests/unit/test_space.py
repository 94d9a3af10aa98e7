"""Will a run's files fit on its bricks: the share a subvolume may receive, by hand, and the one-line refusal."""

from __future__ import annotations

import math
from pathlib import Path

from gluster_model.config.cluster import cluster_from_data
from gluster_model.gluster.space import HEADROOM, bytes_per_brick, shortfall, worst_share
from gluster_model.gluster.volume import VolumeConfig, plan_volume

MB = 1 << 20


def _cluster(n: int = 3):  # type: ignore[no-untyped-def]
    return cluster_from_data({"name": "c", "servers": [{"host": f"10.9.0.{i}", "brick_paths": ["/b"]}
                                                        for i in range(1, n + 1)]}, "c.yaml", Path("."))


def test_worst_share_is_mean_plus_three_binomial_sd_capped_at_all() -> None:
    assert worst_share(3, 1) == 3  # one subvolume takes everything
    # 12 files on 4 subvolumes: 3 + 3·sqrt(12·¼·¾) = 3 + 4.5 = 7.5 → 8
    assert worst_share(12, 4) == math.ceil(3 + 3 * math.sqrt(12 * 0.25 * 0.75)) == 8
    assert worst_share(2, 4) == 2  # never more than all of them


def test_the_reported_hang_is_refused_with_the_numbers() -> None:
    """A replica-3 volume on bricks with 106 MB free, 3 threads × 96 MB: each brick holds all three files."""
    plan = plan_volume(VolumeConfig(name="v", layout="replicate", replica=3), _cluster(3))
    assert bytes_per_brick(plan, 3, 96 * MB) == math.ceil(3 * 96 * MB * HEADROOM)
    short = shortfall(plan, {b.spec: 106 * MB for b in plan.bricks}, 3, 96 * MB)
    assert short is not None and len(short.bricks) == 3
    msg = short.message()
    assert "3 file(s) of 96 MB need 317 MB on a brick" in msg and "10.9.0.1:/b/v-b0 106 MB" in msg
    assert "\n" not in msg and "refused before iozone starts" in msg
    assert shortfall(plan, {b.spec: 400 * MB for b in plan.bricks}, 3, 96 * MB) is None


def test_disperse_and_shard_spread_the_bytes() -> None:
    # disperse 3 redundancy 1: each brick holds half of every file of its set.
    plan = plan_volume(VolumeConfig(name="d", layout="disperse", disperse=3, redundancy=1), _cluster(3))
    assert bytes_per_brick(plan, 2, 100 * MB) == math.ceil(2 * 100 * MB / 2 * HEADROOM)
    # sharded distribute over 3 bricks: 4 files × 8 blocks of 16 MB = 32 blocks spread by hash.
    plan = plan_volume(VolumeConfig(name="s", layout="distribute", shard={"block_size": "16MB"}), _cluster(3))
    blocks = worst_share(32, 3)
    assert blocks < 32 and bytes_per_brick(plan, 4, 128 * MB) == math.ceil(blocks * 16 * MB * HEADROOM)
