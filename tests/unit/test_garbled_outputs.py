"""Every parser of a remote command's output, fed that output garbled: cut short, a line dropped or doubled, a
character or a number replaced (by NaN, Infinity, a negative, text, nothing). Each garbled output either parses
to figures that are measurements (finite, not negative) or raises the project's ParseError naming what it read;
never another exception (a traceback for the user) and never a NaN, an infinity or a negative rate kept as a
measurement. The mutations are drawn with a fixed seed from real outputs (tests/data), so a run is repeatable."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from gluster_model.bench.fio import parse_fio_json
from gluster_model.bench.fio_jobs import parse_client_json
from gluster_model.bench.iozone_parse import parse_iozone
from gluster_model.bench.iperf import parse_iperf_json
from gluster_model.bench.rtt import parse_probe
from gluster_model.config.cluster import cluster_from_data
from gluster_model.errors import GlmodelError, ParseError
from gluster_model.gluster.cli import parse_peer_status_xml, parse_pool_list, parse_version
from gluster_model.gluster.volume import parse_volume_get_xml, parse_volume_info_xml, parse_volume_status_xml
from gluster_model.hardware.limits import parse_cpu_score, parse_limits, parse_throttles, parse_under
from gluster_model.hardware.link import parse_state
from gluster_model.hardware.nic import parse_nic
from gluster_model.preflight import judge_host, parse_probe_output

DATA = Path(__file__).resolve().parent.parent / "data"
MUTATIONS = 150
CLIENT_JSON = json.dumps({"client_stats": [{"jobname": "random_write.0", "hostname": "10.0.0.1", "error": 0, "read": {},
                                            "write": {"bw_bytes": 2097152, "iops": 512.0, "clat_ns": {
                                                "mean": 1000.5, "percentile": {"50.000000": 900000,
                                                                               "99.000000": 4100000}}}}]}, indent=1)
RTT_JSON = json.dumps({"10.0.0.2": 0.021, "10.0.0.3": 0.019, "10.0.0.4": "[Errno 111] Connection refused"})
# a capture's parser by its name's start and end (pool list is read as text, every other gluster output as XML)
# host scripts' outputs captured on this machine (hardware.nic, hardware.limits, hardware.link)
HOST_OUTPUTS: dict[str, tuple[str, Callable[[str], object]]] = {
    "nic": ("dev=eth0\nmtu=1400\nspeed=-1\n", parse_nic),
    "cgroup limits": ("cpu.cfs_quota_us=-1 \ncpu.cfs_period_us=100000 \ncpu.max=50000 100000\n"
                      "memory.limit_in_bytes=9223372036854771712 \nmemory.max=2147483648\n",
                      lambda t: parse_limits(t, 8 << 30, 4)),
    "CPU score": ("155945918\n162219085\n97856707\n", parse_cpu_score),
    "brick devices": ("dev /tmp 254:0\nunder /tmp 254:0\n", lambda t: (parse_under(t), parse_throttles(t))),
    "NIC shaping": ("qdisc: qdisc htb 1: root refcnt 2 r2q 10 default 0x10\nalias: glmodel-link 1000000\n",
                    parse_state),
}
GLUSTER: dict[tuple[str, str], Callable[[str], object]] = {
    ("volume_info", ".xml"): parse_volume_info_xml, ("volume_get", ".xml"): parse_volume_get_xml,
    ("volume_status", ".xml"): parse_volume_status_xml, ("peer_status", ".xml"): parse_peer_status_xml,
    ("pool_list", ".txt"): parse_pool_list, ("version", ".txt"): parse_version}


def _cases() -> list[tuple[str, str, Callable[[str], object]]]:
    cases: list[tuple[str, str, Callable[[str], object]]] = []
    for f in sorted((DATA / "iozone").iterdir()):
        cases.append((f"iozone/{f.name}", f.read_text(), parse_iozone))
    for f in sorted((DATA / "iperf3").iterdir()):
        cases.append((f"iperf3/{f.name}", f.read_text(), lambda t: parse_iperf_json(t, "h1")))
    for f in sorted((DATA / "fio").iterdir()):
        cases.append((f"fio/{f.name}", f.read_text(), lambda t: parse_fio_json(t, "h1")))
    for f in sorted((DATA / "gluster").iterdir()):
        parse = next((fn for (start, end), fn in GLUSTER.items() if f.name.startswith(start) and f.name.endswith(end)),
                     None)
        if parse is not None:
            cases.append((f"gluster/{f.name}", f.read_text(), parse))
    probe = (DATA / "probe" / "lab_node1.txt").read_text()
    cases.append(("probe/lab_node1.txt", probe, lambda t: parse_probe_output(t, "h1")))
    cluster = cluster_from_data({"servers": [{"host": "127.1.1.1", "brick_paths": ["/tmp/lab1/nodes/1/bricks"]},
                                             {"host": "127.1.1.2", "brick_paths": ["/b"]}]}, "test.yaml", Path("/"))
    cases.append(("probe/lab_node1.txt judged", probe, lambda t: judge_host(
        cluster.hosts[0], parse_probe_output(t, "h1"), list(cluster.servers), 1 << 30).facts))
    cases += [(name, text, parse) for name, (text, parse) in HOST_OUTPUTS.items()]
    cases.append(("fio client JSON", CLIENT_JSON,
                  lambda t: parse_client_json(t, ["random_write"], ["10.0.0.1"], 64 << 20)))
    cases.append(("round-trip probe", RTT_JSON,
                  lambda t: [m.value for m in parse_probe("c1", ["10.0.0.2", "10.0.0.3", "10.0.0.4"], t)]))
    return cases


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    kind = rng.randrange(5)
    if kind == 0:
        return text[:rng.randrange(len(text))]
    if kind == 1 and lines:
        i = rng.randrange(len(lines))
        return "".join(lines[:i] + lines[i + 1:])
    if kind == 2 and lines:
        i = rng.randrange(len(lines))
        return "".join(lines[:i + 1] + lines[i:])
    numbers = list(re.finditer(r"\d+(?:\.\d+)?", text))
    if kind == 3 and numbers:
        m = rng.choice(numbers)
        return text[:m.start()] + rng.choice(["NaN", "Infinity", "-5", "-0.5", "", "abc", "1e400", "null"]) + \
            text[m.end():]
    i = rng.randrange(len(text))
    return text[:i] + rng.choice(["NaN", "-1", "", "x", "{", "]", "<", "\x00"]) + text[i + 1:]


def _not_measurements(value: object, path: str = "") -> list[str]:
    """Where a parsed result holds a number that no measurement is: NaN, an infinity or a negative."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [f"{path or 'the result'} = {value!r}"] if not math.isfinite(value) or value < 0 else []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [p for f in dataclasses.fields(value)
                for p in _not_measurements(getattr(value, f.name), f"{path}.{f.name}")]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _not_measurements(v, f"{path}/{k}")]
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _not_measurements(v, f"{path}[]")]
    return []


CASES = _cases()


@pytest.mark.parametrize("name,text,parse", CASES, ids=[c[0] for c in CASES])
def test_garbled_output_is_a_parse_error_or_measurements_never_a_crash(
        name: str, text: str, parse: Callable[[str], object]) -> None:
    try:  # some captures are of failures (a refused connection, EINVAL, a volume that does not exist)
        assert not _not_measurements(parse(text)), f"{name} as captured holds what no measurement is"
    except GlmodelError:
        pass
    rng = random.Random(f"{name}-7")
    crashed, kept = [], []
    for _ in range(MUTATIONS):
        garbled = _mutate(text, rng)
        try:
            result = parse(garbled)
        except GlmodelError:
            continue
        except Exception as exc:  # noqa: BLE001 - any other exception is the failure this test looks for
            crashed.append(f"{type(exc).__name__}: {exc}"[:120])
            continue
        kept += _not_measurements(result)
    assert not crashed, f"{name}: {len(crashed)} garbled output(s) raised outside ParseError, e.g. {crashed[:3]}"
    assert not kept, f"{name}: garbled output(s) kept as measurements: {kept[:3]}"


def test_json_nan_infinity_and_negatives_are_refused_by_name() -> None:
    """Python's JSON decoder takes NaN and Infinity: a figure of them, or a negative one, is garbled output."""
    iperf = json.loads((DATA / "iperf3" / "lab-3.12-P2.json").read_text())
    for bad in (math.nan, math.inf, -1.0):
        iperf["end"]["sum_received"]["bits_per_second"] = bad
        with pytest.raises(ParseError, match="not a measured figure"):
            parse_iperf_json(json.dumps(iperf), "h1")
    fio = json.loads((DATA / "fio" / "lab-3.33-four-tests.json").read_text())
    fio["jobs"][0]["write"]["iops"] = math.inf
    with pytest.raises(ParseError, match="lacks read/write bw or iops"):
        parse_fio_json(json.dumps(fio), "h1")
    fio["jobs"][0]["error"] = "Infinity"
    with pytest.raises(ParseError, match="not an errno"):
        parse_fio_json(json.dumps(fio), "h1")
    got = parse_probe("c1", ["s1", "s2", "s3"], json.dumps({"s1": math.nan, "s2": -0.2, "s9": 0.1}))
    assert [m.value for m in got] == [None, None, None]  # s3 never answered; s9 was not asked for
    assert [m.error for m in got] == ["not a round trip: nan", "not a round trip: -0.2",
                                      "the round-trip probe printed no result for it"]


def _input_files() -> list[tuple[str, Path, Callable[[Path], object]]]:
    from gluster_model import api
    from gluster_model.config.cluster import load_cluster
    from gluster_model.model.artifact import load
    from gluster_model.plan.file import load_plan

    root = DATA.parent.parent
    out: list[tuple[str, Path, Callable[[Path], object]]] = [
        (f"cluster {p.name}", p, lambda q: load_cluster(q, connecting=False))
        for p in sorted((DATA / "clusters").glob("*")) if p.suffix in (".yaml", ".yml", ".ini")]
    out += [(f"plan {p.relative_to(root)}", p, load_plan)
            for p in sorted((root / "experiments" / "plans").glob("*.yaml")) + sorted(root.glob("experiments/*.yaml"))]
    model = root / "data" / "stages_proof" / "link-below.json"
    out.append(("model file", model, load))
    out.append(("what-if file", root / "data" / "stages_proof" / "link-whatif.yaml",
                lambda q: api.predict(model, scenarios=q)))
    return out


INPUT_FILES = _input_files()


@pytest.mark.parametrize("name,path,load", INPUT_FILES, ids=[c[0] for c in INPUT_FILES])
def test_a_garbled_input_file_is_one_error_never_a_crash(name: str, path: Path, load: Callable[[Path], object],
                                                          tmp_path: Path) -> None:
    """The files a user hands glmodel, garbled the same ways: each loads or is the project's one-line error."""
    text = path.read_text()
    rng = random.Random(f"{name}-7")
    garbled = tmp_path / path.name  # same name and suffix: an inventory is told apart by it
    garbled.write_text(text)
    load(garbled)  # whole, it loads from there: the garbled ones reach the parsing they garble
    crashed = []
    for _ in range(40):
        garbled.write_text(_mutate(text, rng))
        try:
            load(garbled)
        except GlmodelError:
            continue
        except Exception as exc:  # noqa: BLE001 - any other exception is the failure this test looks for
            crashed.append(f"{type(exc).__name__}: {exc}"[:120])
    assert not crashed, f"{name}: {len(crashed)} garbled file(s) raised outside the project's errors: {crashed[:3]}"
