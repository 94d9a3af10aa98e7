"""The CLI's own pieces, kept out of ``cli.py`` so that it only parses, calls ``api`` and renders: a failure as
one line with its exit code, option types whose text a library parser reads, JSON output, and the names the
options offer (design strategies, hardware knobs). Light imports only: ``glmodel --help`` loads no model code."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..design.registry import STRATEGIES as STRATEGIES  # the design registry: no heavy import
from ..hardware.settings import OPTIONS as HARDWARE_KNOBS  # the hardware knobs: no heavy import
from ..units import parse_ints as parse_ints, parse_size

@contextmanager
def working(text: str) -> Iterator[None]:
    """A spinner on stderr saying ``text`` while a long computation runs (fit, tune, predict, a report); silent
    when stderr is not a terminal, so piped output and logs stay clean."""
    from .console import spinner

    with spinner() as say:
        say(text)
        yield


__all__ = ["HARDWARE_KNOBS", "SIZE", "STRATEGIES", "Failure", "GlmodelGroup", "Parsed", "checked_outputs", "echo_json",
           "parse_ints", "setting_type", "agree_to_changes", "working"]


def checked_outputs(*outputs: tuple[Any, str, tuple[str, ...]]) -> None:
    """Every (path or None, option, allowed suffixes) writable, before the work: a bad path loses nothing."""
    from ..outputs import check_output

    for path, option, suffixes in outputs:
        if path is not None:
            check_output(path, option, suffixes)


class Failure(click.ClickException):
    """A one-line error with the exit code of the GlmodelError behind it."""

    def __init__(self, message: str, code: int = 1, lines: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.exit_code = code  # type: ignore[misc]  # click reads it per instance
        self.lines = lines

    def show(self, file: Any = None) -> None:
        from ..text import capped, one_line

        for line in self.lines:  # one per host or item the error is about, then the summary
            click.echo(f"  ✗ {capped(one_line(line))}", err=True)
        click.echo(f"glmodel: error: {capped(one_line(self.message))}", err=True)


class GlmodelGroup(click.Group):
    """Turns a GlmodelError raised anywhere in a command into one clear line (a traceback only with --debug)."""

    def invoke(self, ctx: click.Context) -> Any:
        from ..errors import GlmodelError

        try:
            return super().invoke(ctx)
        except GlmodelError as exc:
            if ctx.params.get("debug"):
                raise
            raise Failure(str(exc), exc.cli_status, exc.lines) from None
        except KeyboardInterrupt:
            click.echo("glmodel: interrupted", err=True)
            sys.exit(130)


if TYPE_CHECKING:
    _Param = click.ParamType[Any, Any]  # generic for the type checker in recent click
else:
    _Param = click.ParamType


class Parsed(_Param):
    """An option whose text a library parser reads; its ValueError is click's one-line usage error naming it."""

    def __init__(self, name: str, parse: Callable[[str], Any]) -> None:
        self.name, self.parse = name, parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return self.parse(value) if isinstance(value, str) else value
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def setting_type(kind: str) -> Parsed:
    """A lab hardware option (link, backing, disk, ram, cpu, ...): its text parsed into the node settings."""
    from functools import partial

    def parse(text: str, kind: str) -> dict[str, Any]:
        from ..api import parse_hardware as parse_setting

        return parse_setting(kind, text)

    return Parsed("VALUE", partial(parse, kind=kind))


SIZE = Parsed("SIZE", parse_size)


def echo_json(result: Any) -> None:
    """A result (anything with ``to_json()``, or plain data) as indented JSON on standard output."""
    import json

    click.echo(json.dumps(result.to_json() if hasattr(result, "to_json") else result, indent=2, default=str))


def agree_to_changes(cluster: Path, plan_file: Path | None, variant: str | None, yes: bool,
                     refusals: Callable[[], object], machine_output: bool = False) -> None:
    """On a cluster that is not a glmodel lab: run ``refusals`` (every check that needs no change, so a plan the
    cluster cannot run is refused before anything is asked) and reach every host (one line each that cannot be
    reached), say what the campaign will do, then ask (or take --yes); without a terminal and without --yes,
    refuse before the first change. With ``machine_output`` (--json) what it will do goes to standard error, so
    standard output stays the result alone."""
    from .. import api

    lines = api.changes_to_cluster(cluster, plan_file, variant=variant)
    if not lines:
        return
    refusals()
    if yes or sys.stdin.isatty():  # about to go ahead, or to ask someone who can: a host down says so first
        api.reach(cluster)
    # what will happen goes to standard output, as any report of work does; standard error keeps one line for
    # a refusal
    click.echo(f"{cluster} is not a glmodel lab; {lines[0]} this will:", err=machine_output)
    for line in lines[1:]:
        click.echo(f"  - {line}", err=machine_output)
    if yes:
        return
    if not sys.stdin.isatty():
        raise click.UsageError(f"{cluster} is not a glmodel lab: run again with --yes to agree to the changes above "
                               "(or --dry-run to see the runs first)")
    if not click.confirm("Go ahead?", default=False, err=True):
        raise Failure("nothing was changed")


def run(cli: click.Group) -> NoReturn:
    """Run the command line ``cli`` and exit with its status; a usage error (a bad option or value) is one line
    naming the command and the option, an interrupt exit 130."""
    try:
        code = cli.main(prog_name="glmodel", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # `glmodel` or a group alone: its help, as click does
        click.echo(exc.format_message(), err=True)
        raise SystemExit(exc.exit_code) from None
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "glmodel"
        click.echo(f"glmodel: error: {where}: {exc.format_message()} (see `{where} --help`)", err=True)
        raise SystemExit(exc.exit_code) from None
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except click.exceptions.Abort:
        click.echo("glmodel: interrupted", err=True)
        raise SystemExit(130) from None
    raise SystemExit(code if isinstance(code, int) else 0)
