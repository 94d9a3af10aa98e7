"""The hostile-user corpus: every kind of bad input, through the real CLI, gets exactly one line on stderr that
names the file, field or option, exit code 1 or 2, no traceback, and nothing written anywhere."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent.parent / "data"
BAD = DATA / "bad_inputs"
CLUSTER = DATA / "clusters" / "full.yaml"
LONGLEY = DATA / "model" / "longley.csv"
GOOD_MODEL = "{t}/good.json"

# (id, argv with {d}: the corpus, {t}: a scratch directory, {c}: a valid cluster file; text the line must hold)
CASES = [
    ("inventory-cycle", ["check", "--cluster", "{d}/inventory-cycle.ini"], "cycle"),
    ("inventory-hosts-list", ["check", "--cluster", "{d}/inventory-hosts-list.yaml"], "servers.hosts"),
    ("inventory-vars-list", ["check", "--cluster", "{d}/inventory-vars-list.yaml"], "servers.vars"),
    ("cluster-ipv6-scope", ["check", "--cluster", "{d}/cluster-ipv6-scope-shell.yaml"], "scope ID"),
    ("cluster-name-dotdot", ["check", "--cluster", "{d}/cluster-name-dotdot.yaml"], "servers[0].name"),
    ("plan-size-inf", ["collect", "--cluster", "{c}", "--plan", "{d}/plan-size-inf.yaml", "--dry-run"], "file_size"),
    ("plan-size-nan", ["collect", "--cluster", "{c}", "--plan", "{d}/plan-size-nan.yaml", "--dry-run"], "file_size"),
    ("plan-size-alias", ["collect", "--cluster", "{c}", "--plan", "{d}/plan-size-alias.yaml", "--dry-run"],
     "file_size"),
    ("plan-size-huge", ["collect", "--cluster", "{c}", "--plan", "{d}/plan-size-huge.yaml", "--dry-run"], "1024 TB"),
    ("plan-record-over-file", ["collect", "--cluster", "{c}", "--plan", "{d}/plan-record-over-file.yaml",
                               "--dry-run"], "record_size"),
    ("plan-grid-too-big", ["collect", "--cluster", "{c}", "--plan", "{d}/plan-grid-5m.yaml", "--dry-run"],
     "points (at most 100,000)"),
    *[(f"model-{k}", ["predict", "--model", f"{{d}}/model-{k}.json", "--set", "network_gbps=90"], what)
      for k, what in [("nan", "NaN"), ("negvar", "negative variance"), ("noparams", "missing 'params'"),
                      ("strparams", "could not convert"), ("shortparams", "7 coefficients expected"),
                      ("nodomain", "missing 'domain'"), ("kind", "quantum"), ("longcat", "longer than 200"),
                      ("pickle", "not a glmodel model file")]],
    ("model-deep", ["predict", "--model", "{t}/deep.json", "--set", "network_gbps=90"], "nested too deeply"),
    ("predict-replica-0", ["predict", "--model", GOOD_MODEL, "--set", "file_size=0"], "file_size"),
    ("predict-network-0", ["predict", "--model", GOOD_MODEL, "--set", "network_gbps=0"], "network_gbps"),
    ("predict-figure-format", ["predict", "--model", GOOD_MODEL, "--set", "network_gbps=90", "--figure",
                               "{t}/fig.xyz"], "--figure"),
    ("predict-csv-dir", ["predict", "--model", GOOD_MODEL, "--set", "network_gbps=90", "--csv", "{t}"], "--csv"),
    *[(f"store-{k}-{cmd}", [cmd, "list", "--store", f"{{d}}/store-{k}.db"] if cmd == "runs" else
       [cmd, "--store", f"{{d}}/store-{k}.db", "--out", "{t}/x.csv"], what)
      for k, what in [("junk", "file is not a database"), ("malformed", "file is not a database"),
                      ("foreign", "not a glmodel store")] for cmd in ("runs", "export")],
    ("store-foreign-collect", ["collect", "--cluster", "{c}", "--plan", str(DATA.parent.parent / "experiments" /
                               "plans" / "smoke.yaml"), "--store", "{t}/foreign.db"], "not a glmodel store"),
    ("export-missing-dir", ["export", "--store", "{d}/store-foreign.db", "--out", "{t}/no/such/x.csv"],
     "does not exist"),
    ("fit-out-dir", ["fit", "--data", str(LONGLEY), "--out", "{t}"], "is a directory"),
    ("fit-out-missing-dir", ["fit", "--data", str(LONGLEY), "--out", "{t}/no/m.json"], "does not exist"),
    ("fit-out-proc", ["fit", "--data", str(LONGLEY), "--out", "/proc/m.json"], "not writable"),
    ("design-size-csv-proc", ["design-size", "--data", str(LONGLEY), "--csv", "/proc/x.csv"], "not writable"),
    ("data-inf", ["fit", "--data", "{d}/data-inf.csv", "--out", "{t}/m.json"], "network_gbps"),
    ("data-1e308", ["design-size", "--data", "{d}/data-1e308.csv"], "network_gbps"),
    ("data-swapped-headers", ["fit", "--data", "{d}/data-swapped-headers.csv", "--out", "{t}/m.json"],
     "column servers"),
    ("option-ram-0", ["lab", "node", "--dir", "{t}/lab", "--ram", "0"], "--ram"),
    ("option-disk-words", ["lab", "up", "--dir", "{t}/lab", "--disk", "fast"], "--disk"),
    ("option-client-nodes-all", ["lab", "up", "--dir", "{t}/lab", "--nodes", "2", "--client-nodes", "2"],
     "--client-nodes 2: give 0 (every node client and server) up to 1"),
]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gluster_model.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


def _snapshot(*dirs: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for d in dirs for p in sorted(d.rglob("*"))}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    t = tmp_path_factory.mktemp("bad")
    fitted = _cli("fit", "--data", str(LONGLEY), "--family", "hardware", "--model", "loglinear", "--bootstrap", "0",
                  "--out", str(t / "good.json"), cwd=t)
    assert fitted.returncode == 0, fitted.stderr
    (t / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    (t / "foreign.db").write_bytes((BAD / "store-foreign.db").read_bytes())
    return t


def test_corpus_covers_every_kind() -> None:
    kinds = {case[0].split("-")[0] for case in CASES}
    assert kinds >= {"inventory", "cluster", "plan", "model", "predict", "store", "export", "fit", "data",
                     "option", "design"} and len(CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_writes_nothing(case: tuple[str, list[str], str], scratch: Path) -> None:
    _, argv, expected = case
    args = [a.format(d=BAD, t=scratch, c=CLUSTER) for a in argv]
    before = _snapshot(BAD, scratch)
    proc = _cli(*args, cwd=scratch)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode in (1, 2), (proc.returncode, proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert expected in lines[0], lines[0]
    assert _snapshot(BAD, scratch) == before  # nothing created, changed or removed


def test_a_dry_run_never_needs_the_store_to_exist(tmp_path: Path) -> None:
    plan = DATA.parent.parent / "experiments" / "plans" / "smoke.yaml"
    for store in (f"sqlite:///{tmp_path}/no/new.db", str(tmp_path / "new.db")):
        proc = _cli("collect", "--cluster", str(CLUSTER), "--plan", str(plan), "--dry-run", "--store", store,
                    cwd=tmp_path)
        assert proc.returncode == 0 and "6 run(s)" in proc.stdout, proc.stderr
    assert list(tmp_path.iterdir()) == []
