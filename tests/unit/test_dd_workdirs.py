"""Where the dd engine makes its work directories: once, from one client, on a shared volume."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from gluster_model.bench.dd import make_workdirs
from gluster_model.config.cluster import Host


class Recorder:
    """Records the commands it is asked to run (make_workdirs only runs commands and reads no output)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def run(self, host: str, command: list[str], **_: Any) -> None:
        self.calls.append((host, command))

    def run_many(self, hosts: list[str], command: Any, **_: Any) -> None:
        for h in hosts:
            self.calls.append((h, command(h) if callable(command) else command))


def _clients() -> list[Host]:
    return [cast(Host, SimpleNamespace(address=f"10.0.0.{i}", name=f"c{i}")) for i in (1, 2, 3)]


def test_on_a_shared_volume_the_first_client_makes_every_directory_in_one_command() -> None:
    rec, clients = Recorder(), _clients()
    roots = {h.address: f"/mnt/{h.name}" for h in clients}  # each client's mount point of the same volume
    make_workdirs(rec, clients, roots, "glmodel-dd", shared=True)  # type: ignore[arg-type]
    assert rec.calls == [("10.0.0.1", ["mkdir", "-p", "--", "/mnt/c1/glmodel-dd/c1", "/mnt/c1/glmodel-dd/c2",
                                       "/mnt/c1/glmodel-dd/c3"])]


def test_on_local_directories_each_client_makes_its_own() -> None:
    rec, clients = Recorder(), _clients()
    roots = {h.address: "/var/tmp/glmodel" for h in clients}
    make_workdirs(rec, clients, roots, "glmodel-dd", shared=False)  # type: ignore[arg-type]
    assert sorted(rec.calls) == [(f"10.0.0.{i}", ["mkdir", "-p", "--", f"/var/tmp/glmodel/glmodel-dd/c{i}"])
                                 for i in (1, 2, 3)]
