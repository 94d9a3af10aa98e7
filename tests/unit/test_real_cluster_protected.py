"""A cluster that is not a glmodel lab is told what a campaign will do to it and asked before the first change;
without a terminal and without --yes, refused in one line, with nothing written."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from gluster_model import api
from gluster_model.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _cluster(tmp_path: Path, emulation: bool = False) -> Path:
    key = tmp_path / "id"
    key.write_text("not a key")
    data = {"name": "prod", "ssh": {"identity_file": str(key), "known_hosts": str(tmp_path / "kh")},
            "defaults": {"brick_paths": ["/data/glmodel"]},
            "servers": [{"host": "10.99.0.1"}, {"host": "10.99.0.2"}], "clients": [{"host": "10.99.0.3"}]}
    if emulation:
        data["emulation"] = {"allow": True}
    path = tmp_path / "prod.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_collect_on_a_real_cluster_without_yes_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    cf = _cluster(tmp_path)
    store = tmp_path / "s.db"
    result = CliRunner().invoke(cli, ["collect", "--cluster", str(cf), "--plan",
                                      str(ROOT / "experiments" / "plans" / "smoke.yaml"), "--store", str(store)])
    assert result.exit_code == 2, result.output
    out = result.output
    assert "is not a glmodel lab; on 2 server(s) and 1 client(s) of prod this will:" in out
    assert "delete each of those volumes and remove their brick directories" in out and "/data/glmodel" in out
    assert "drop the page cache" in out
    last = out.strip().splitlines()[-1]
    assert "run again with --yes" in last and "Traceback" not in out
    assert not store.exists()  # nothing written before the refusal


def test_the_changes_name_emulation_and_its_undo_only_when_the_plan_changes_hardware(tmp_path: Path) -> None:
    cf = _cluster(tmp_path, emulation=True)
    plain = api.changes_to_cluster(cf, ROOT / "experiments" / "plans" / "smoke.yaml")
    slowed = api.changes_to_cluster(cf, ROOT / "experiments" / "plans" / "bottleneck.yaml")
    assert not any("emulate" in line for line in plain)
    assert any(line.startswith("emulate slower hardware (link, disk, ram, cpu)") and "glmodel restore" in line
               for line in slowed)


def test_a_lab_is_not_asked(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    lab.mkdir()
    cf = _cluster(tmp_path)
    data = yaml.safe_load(cf.read_text())
    data["lab"] = {"state_dir": str(lab)}
    cf.write_text(yaml.safe_dump(data))
    assert api.changes_to_cluster(cf, None) == []


def test_with_json_what_will_be_done_goes_to_standard_error(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`verify --json --yes` on a cluster that is not a lab: standard output is the JSON alone, so a script can
    read it; the notice of what the command will do is on standard error."""
    import click

    from gluster_model.present.cli_kit import agree_to_changes

    monkeypatch.setattr(api, "reach", lambda cluster: None)  # the hosts are not there; what is printed is the test
    cf = _cluster(tmp_path, emulation=True)
    plan = ROOT / "experiments" / "plans" / "bottleneck.yaml"

    @click.command()
    @click.option("--json", "as_json", is_flag=True)
    def cmd(as_json: bool) -> None:
        agree_to_changes(cf, plan, None, True, lambda: None, machine_output=as_json)
        click.echo('{"ok": true}' if as_json else "done")

    machine = CliRunner().invoke(cmd, ["--json"])
    assert machine.exit_code == 0, machine.output
    assert machine.stdout == '{"ok": true}\n'
    assert "is not a glmodel lab" in machine.stderr and "emulate slower hardware" in machine.stderr
    person = CliRunner().invoke(cmd, [])
    assert "is not a glmodel lab" in person.stdout and person.stderr == ""
