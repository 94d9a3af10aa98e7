"""The CLI's own pieces, kept out of ``cli.py`` so that it only parses, calls ``api`` and renders: a failure as
one line with its exit code, option types whose text a library parser reads, JSON output, and the names the
options offer (design strategies, hardware knobs). Light imports only: ``glmodel --help`` loads no model code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ..design.registry import STRATEGIES as STRATEGIES  # the design registry: no heavy import
from ..hardware.settings import OPTIONS as HARDWARE_KNOBS  # the hardware knobs: no heavy import
from ..units import parse_ints as parse_ints, parse_size

__all__ = ["HARDWARE_KNOBS", "SIZE", "STRATEGIES", "Failure", "GlmodelGroup", "Parsed", "echo_json", "parse_ints",
           "setting_type"]


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
