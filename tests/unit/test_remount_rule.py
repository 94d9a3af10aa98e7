"""When a run needs a fresh client mount: only when the FUSE client can carry file data from the run before."""

from __future__ import annotations

import pytest

from gluster_model.gluster.volume import VolumeConfig, client_keeps_file_data


@pytest.mark.parametrize("translators, options, size, keeps", [
    ({}, {}, 4 << 20, False),                         # defaults: quick-read only holds files up to 64 KiB
    ({}, {}, 64 << 10, True),                         # ... which this one is
    ({"quick-read": False}, {}, 4 << 10, False),
    ({"io-cache": True}, {}, 1 << 30, True),          # io-cache keeps pages of closed files
    ({"read-ahead": True, "write-behind": True}, {}, 1 << 30, False),  # per open file, gone at close
])
def test_client_keeps_file_data(translators: dict, options: dict, size: int, keeps: bool) -> None:
    vol = VolumeConfig.model_validate({"name": "v", "translators": translators, "options": options})
    assert client_keeps_file_data(vol, size) is keeps
