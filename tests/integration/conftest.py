"""One real 3-node lab per test process: glusterd + sshd per node, each in a network namespace (10.213.W.x)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from gluster_model.campaign.baselines import DISTURBED
from gluster_model.lab import LabState, lab_down, lab_up, restore, snapshot
from gluster_model.lab.hardware import set_backing
from gluster_model.lab.netns import node_address
from gluster_model.store.identity import StoredBaseline, StoredTrial


def _worker() -> int:
    """This process's number among the xdist workers (gw0, gw1, ...; 0 without xdist)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker[2:]) if worker[2:].isdigit() else 0


# This process's lab subnet, one per xdist worker (gw0 10.213.1.0/24, gw1 10.213.2.0/24, ...), and one for a
# second lab of its own (the lifecycle tests'). The workers' networks are apart already (``pytest_configure``),
# but their labs' nodes share one process table and one /tmp, where glmodel finds a node's processes and files
# by its address (the iozone children serving a master, a fio server's pid file): two labs at the same
# addresses would stop each other's trials.
LAB_SUBNET = f"10.213.{1 + _worker()}.0/24"
SPARE_SUBNET = f"10.213.{101 + _worker()}.0/24"


def node_ip(index: int) -> str:
    """The address of node ``index`` (from 1) of this process's lab."""
    return node_address(index, LAB_SUBNET)


def pytest_configure(config: pytest.Config) -> None:
    """Give this pytest process a network namespace of its own, before anything opens a socket.

    A lab's bridge holds the machine's side of the lab subnet (10.213.1.254), so on one network two labs could
    not both be up: a user's own lab would stop the tests, and the tests could not run in parallel processes.
    In a namespace of its own each process (an xdist worker, or the one process of a plain run) has its own
    bridge and subnet; everything it starts (the CLI, ssh, a PostgreSQL server on 127.0.0.1) inherits it. The
    nodes' namespaces were always their own; only the host side moves.
    """
    if os.geteuid() != 0:
        return  # the lab fixture says why these tests need root
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    clone_newnet = 0x40000000
    if libc.unshare(clone_newnet) != 0:
        errno = ctypes.get_errno()
        pytest.exit(f"the integration tests could not get a network namespace of their own: {os.strerror(errno)}",
                    returncode=1)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


# Seconds the longest files' tests took, three labs at once on two cores (pytest --durations, 2026-11-29;
# test_lab_latency.py estimated from one run alone after its delay went from 1 to 5 ms, 2026-11-30).
# scripts/test.sh hands files to its lab processes in collection order (--no-loadscope-reorder), and these go
# first, longest first, so that no long file starts while the other processes are running out of work (longest
# processing time first); a wrong figure costs minutes, never a result.
LONGEST = {"test_round_trip_stage.py": 232, "test_collect_failures.py": 193, "test_collect.py": 167,
           "test_studies_report.py": 165, "test_verify.py": 149, "test_emulation.py": 139, "test_compare.py": 136,
           "test_collect_lab_hardware.py": 118, "test_compare_interleaved.py": 107, "test_volumes_iozone.py": 103,
           "test_collect_search.py": 98, "test_iozone_stops.py": 93, "test_collect_disturbed.py": 82,
           "test_client_nodes.py": 64, "test_baselines_beside.py": 25, "test_lab_latency.py": 150,
           "test_collect_space.py": 54, "test_collect_descent.py": 70}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in str(item.path):
            item.add_marker(pytest.mark.lab)
    items.sort(key=lambda item: -LONGEST.get(item.path.name, 0) if "integration" in str(item.path) else 0)


@contextmanager
def lab_running(tmp_path_factory: pytest.TempPathFactory, name: str, subnet: str) -> Iterator[LabState]:
    """A 3-node lab in a new directory on ``subnet`` for the block, taken down after it."""
    if os.geteuid() != 0:
        pytest.fail("the integration tests need root to run the GlusterFS lab (scripts/test.sh runs them as root)")
    lab_dir = tmp_path_factory.mktemp(name)
    # 1 GiB loop images (when a test gives a node a disk): formatting 4 GiB ones would cost the suite seconds each.
    state = lab_up(lab_dir, nodes=3, brick_size=1 << 30, subnet=subnet)
    try:
        yield state
    finally:
        lab_down(lab_dir)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    with lab_running(tmp_path_factory, "lab", LAB_SUBNET) as state:
        yield state


@pytest.fixture(autouse=True)
def brick_size_put_back(lab: LabState) -> Iterator[None]:
    """The lab's brick size (the size of the loop image a node gets when it needs a block device, such as for a
    disk limit) as it was before the test: a test that backs bricks with 64 MB of tmpfs and then puts back the
    directory leaves that size behind, and a later test's disk limit would get a 64 MB brick."""
    before = (LabState.load(lab.path) or lab).brick_size
    yield
    now = LabState.load(lab.path)
    if now is not None and now.brick_size != before and not now.backing:
        set_backing(now, {n.address: "dir" for n in now.nodes}, before)


@pytest.fixture
def lab_put_back(lab: LabState) -> Iterator[LabState]:
    """The session lab, its every node's link, disk, RAM and CPU put back as they were after the test, passed
    or failed: a test that dies with the lab throttled must not slow or break the tests after it."""
    before = snapshot(LabState.load(lab.path) or lab)
    try:
        yield lab
    finally:
        now = LabState.load(lab.path)
        if now is not None and snapshot(now) != before:
            restore(now, before)


def ssh_client_connections(lab: LabState) -> list[str]:
    """Established connections of OpenSSH clients on this machine to the lab's sshd (``ss`` lines): glmodel's
    shared connections (iozone's children ride on them) must be gone once it has exited."""
    port = yaml.safe_load(lab.cluster_file.read_text()).get("ssh", {}).get("port", 22)
    out = subprocess.run(["ss", "-Htnp", "state", "established", f"( dport = :{port} )"], capture_output=True,
                         text=True, check=True).stdout
    addresses = {n.address for n in lab.nodes}
    return [ln for ln in out.splitlines() if len(ln.split()) >= 4 and ln.split()[3].rsplit(":", 1)[0] in addresses
            and '(("ssh",' in ln]


def lab_processes(lab: LabState, pattern: str) -> list[str]:
    """``pid args`` of the processes matching ``pattern`` (a regular expression over the command line) that run
    in this lab's node namespaces: another lab's, or a benchmark's beside the tests, are not this test's."""
    import re

    inodes = set()
    for node in lab.nodes:
        try:
            inodes.add(os.stat(f"/run/netns/{node.netns}").st_ino)
        except OSError:
            continue
    out = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if os.stat(proc / "ns" / "net").st_ino not in inodes:
                continue
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if re.search(pattern, args):
            out.append(f"{proc.name} {args}")
    return out


def lab_throttle_lines(lab: LabState, kinds: tuple[str, ...] = ("read_bps", "write_bps")) -> str:
    """The block-throttle entries of ``kinds`` on this lab's own brick devices (another lab's are not this
    test's)."""
    from gluster_model.lab.disk import device_of

    state = LabState.load(lab.path) or lab
    devices = {d for d in (device_of(n) for n in state.nodes) if d}
    files = [Path("/sys/fs/cgroup/blkio") / f"blkio.throttle.{k}_device" for k in kinds]
    return "".join(line for f in files if f.exists() for line in f.read_text().splitlines(True)
                   if line.split() and line.split()[0] in devices)


def kept_trials(trials: list[StoredTrial]) -> list[StoredTrial]:
    """The trials a run kept. On a busy machine collect flags a trial that another process disturbed and
    measures it again, by design: the flagged one stays in the store with its reason, checked here, and is not
    a trial stored twice."""
    flagged = [t for t in trials if t.outlier]
    assert all(t.flagged_because for t in flagged), [t.idx for t in flagged if not t.flagged_because]
    return [t for t in trials if not t.outlier]


def kept_baselines(rows: list[StoredBaseline]) -> list[StoredBaseline]:
    """A store's baselines less the measurements something disturbed (on a busy machine collect keeps them
    as errors that say so and measures again, by design); any other error stays, for the test to see."""
    return [b for b in rows if not (b.error or "").startswith(DISTURBED)]


def glmodel(*args: str, check: bool = False, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess, as a user would."""
    env = {**os.environ, "COLUMNS": "240"}  # a wide terminal: whole lines for the assertions below to find
    proc = subprocess.run([sys.executable, "-m", "gluster_model.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"glmodel {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def cluster_file(lab: LabState) -> Path:
    return lab.cluster_file


def client_apart(lab: LabState, tmp_path: Path) -> str:
    """The lab's cluster file with node 3 as the only client, so no client holds a brick of a 2-server volume:
    each copy a client writes, and every read, crosses its link (a client beside a brick, as on any machine,
    writes that copy and reads over its own loopback)."""
    data = yaml.safe_load(lab.cluster_file.read_text())
    data["clients"] = [lab.nodes[2].address]
    data["lab"]["state_dir"] = str(lab.path)
    data["ssh"]["identity_file"] = str(lab.path / "ssh" / "id_ed25519")
    data["ssh"]["known_hosts"] = str(lab.path / "ssh" / "known_hosts")
    cf = tmp_path / "client-apart.yaml"
    cf.write_text(yaml.safe_dump(data))
    return str(cf)


def fitted_model(factory: pytest.TempPathFactory, name: str, write_table: Callable[[Path], None],
                 *fit_args: str) -> Path:
    """A model file `glmodel fit --data` writes from the table ``write_table`` makes, as a user would fit it."""
    d = factory.mktemp(name)
    write_table(d / "train.csv")
    glmodel("fit", "--data", str(d / "train.csv"), *fit_args, "--out", str(d / "model.json"), check=True,
            timeout=300)
    return d / "model.json"


def _iozone_master_of(pid: int) -> bool:
    """Whether the process ``pid`` has an iozone child (the distributed master collect starts here)."""
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        name, rest = stat.split("(", 1)[1].rsplit(")", 1)
        if name == "iozone" and int(rest.split()[1]) == pid:
            return True
    return False


@contextmanager
def collect_at_iozone_start(lab: LabState, plan: Path, store: str) -> Iterator[subprocess.Popen[str]]:
    """`glmodel collect` of ``plan`` in the background, handed over once its iozone master has started (the
    run had room and its volume is mounted; the children have not written yet); killed if it still runs after."""
    proc = subprocess.Popen([sys.executable, "-m", "gluster_model.cli", "collect", "--cluster", str(lab.cluster_file),
                             "--plan", str(plan), "--store", store], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None and not _iozone_master_of(proc.pid):
            time.sleep(0.05)
        assert proc.poll() is None, "collect ended before iozone started"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()


def completes_on_second_attempt(lab: LabState, plan: Path, store: str) -> None:
    """The same collect again completes the plan's one failed run: a second attempt, one trial kept."""
    from gluster_model.store import open_store

    again = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan), "--store", store,
                    timeout=300, check=True)
    assert "1 run(s) done now" in again.stdout
    with open_store(store, create=False) as st:
        (run,) = st.runs()
        assert run.status == "done" and run.attempts == 2
        # one kept; a trial disturbed by a busy machine is flagged with its reason and measured again
        assert [t.status for t in kept_trials(st.trials(run.id))] == ["ok"]
