"""Where the dd engine makes its work directories: once, from one client, on a shared volume."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from gluster_model.bench.dd import make_workdirs
from gluster_model.config.cluster import Host

from ..fakes import FakeExecutor


def _clients() -> list[Host]:
    return [cast(Host, SimpleNamespace(address=f"10.0.0.{i}", name=f"c{i}")) for i in (1, 2, 3)]


def test_on_a_shared_volume_the_first_client_makes_every_directory_in_one_command() -> None:
    rec, clients = FakeExecutor(), _clients()
    roots = {h.address: f"/mnt/{h.name}" for h in clients}  # each client's mount point of the same volume
    make_workdirs(rec, clients, roots, "glmodel-dd", shared=True)
    assert rec.calls == [("10.0.0.1", "mkdir -p -- /mnt/c1/glmodel-dd/c1 /mnt/c1/glmodel-dd/c2 /mnt/c1/glmodel-dd/c3")]


def test_on_local_directories_each_client_makes_its_own() -> None:
    rec, clients = FakeExecutor(), _clients()
    roots = {h.address: "/var/tmp/glmodel" for h in clients}
    make_workdirs(rec, clients, roots, "glmodel-dd", shared=False)
    assert sorted(rec.calls) == [(f"10.0.0.{i}", f"mkdir -p -- /var/tmp/glmodel/glmodel-dd/c{i}") for i in (1, 2, 3)]
