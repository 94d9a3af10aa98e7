"""The CLI must start fast: heavy libraries stay out of `glmodel --help`."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pandas", "statsmodels", "sklearn", "matplotlib", "paramiko", "pydantic", "sqlalchemy", "SALib", "numpy")


def test_help_lists_commands_without_heavy_imports() -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from gluster_model.cli import cli\n"
        "r = CliRunner().invoke(cli, ['--help'])\n"
        "print(r.output)\n"
        f"print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("HEAVY="), out
    for command in ("check", "lab", "trust", "volume", "bench"):
        assert f"  {command} " in out


def test_every_command_has_help_with_example() -> None:
    from click.testing import CliRunner

    from gluster_model.cli import cli

    for args in (["check"], ["trust"], ["lab", "up"], ["lab", "down"], ["lab", "status"], ["volume", "apply"],
                 ["volume", "teardown"], ["volume", "show"], ["bench", "iozone"]):
        r = CliRunner().invoke(cli, [*args, "--help"])
        assert r.exit_code == 0 and "Example: glmodel" in r.output, args


def test_bad_cli_value_is_one_line() -> None:
    from click.testing import CliRunner

    from gluster_model.cli import cli

    r = CliRunner().invoke(cli, ["lab", "up", "--nodes", "99"])
    assert r.exit_code == 2 and "99 is not in the range 1<=x<=16" in r.output and "Traceback" not in r.output


def _commands(group: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    import click

    assert isinstance(group, click.Group)
    out: list[tuple[str, ...]] = []
    for name, cmd in group.commands.items():
        out += _commands(cmd, path + (name,)) if isinstance(cmd, click.Group) else [path + (name,)]
    return out


def test_every_command_answers_help_and_the_readme_documents_it() -> None:
    from pathlib import Path

    from click.testing import CliRunner

    from gluster_model.cli import cli

    readme = (Path(__file__).parents[2] / "docs" / "reference.md").read_text()
    commands = _commands(cli)
    assert len(commands) >= 24 and ("volume", "teardown") in commands and ("runs", "show") in commands
    undocumented = []
    for path in commands:
        result = CliRunner().invoke(cli, [*path, "--help"])
        assert result.exit_code == 0 and "Usage: " in result.output, path
        if f"`glmodel {' '.join(path)}" not in readme:  # a row of the reference's command table starts so
            undocumented.append(" ".join(path))
    assert undocumented == []
