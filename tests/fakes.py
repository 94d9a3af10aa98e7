"""Test doubles for the remote side: an executor that records every command and replays scripted outputs, and a
trial engine that returns scripted results. Unit tests of the campaign loop run on them without a lab; the
integration tests run the same loop on the real one."""

from __future__ import annotations

import re
import shlex
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from gluster_model.bench.engine import EngineResult, TrialRequest
from gluster_model.errors import CommandFailed, ConnectError, GlmodelError, MultiHostError, RemoteError
from gluster_model.remote.executor import Command, CommandResult, quote_command

T = TypeVar("T")


@dataclass
class Rule:
    pattern: re.Pattern[str]
    host: str | None
    stdout: str = ""
    exit_code: int = 0
    stderr: str = ""
    error: Callable[[str, str], GlmodelError] | None = None
    reply: Callable[[str, str], tuple[int, str]] | None = None  # (host, command) -> (exit code, stdout)
    times: int | None = None  # how often it still applies; None: always


@dataclass
class FakeExecutor:
    """Records ``(host, command)`` of every call; answers by the newest matching rule, else exit 0 and no output.

    ``on(regex, stdout=..., exit_code=..., host=..., times=...)`` scripts an answer; ``fail(regex, host=...)``
    makes the command raise the error a lost connection raises. ``ran(regex)`` lists the hosts that ran a match.
    """

    calls: list[tuple[str, str]] = field(default_factory=list)
    devices: list[tuple[str, str]] = field(default_factory=list)  # the calls that measure a device (``run(device=)``)
    rules: list[Rule] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    cluster: Any = None  # the cluster it stands for (an operation on a cluster reads it from the executor)
    dropped: list[str] = field(default_factory=list)  # hosts whose connection the code asked to open again
    silenced: dict[str, str] = field(default_factory=dict)  # hosts marked silent: their commands fail at once

    def on(self, pattern: str, stdout: str = "", *, exit_code: int = 0, stderr: str = "", host: str | None = None,
           times: int | None = None) -> FakeExecutor:
        self.rules.append(Rule(re.compile(pattern), host, stdout, exit_code, stderr, times=times))
        return self

    def answer(self, pattern: str, reply: Callable[[str, str], tuple[int, str]]) -> FakeExecutor:
        """Answer matching commands by ``reply(host, command) -> (exit code, stdout)`` (a stateful fake)."""
        self.rules.append(Rule(re.compile(pattern), None, reply=reply))
        return self

    def fail(self, pattern: str, *, host: str | None = None, times: int | None = None,
             message: str = "connection lost") -> FakeExecutor:
        self.rules.append(Rule(re.compile(pattern), host, times=times,
                               error=lambda h, c: RemoteError(h, f"{message} while running `{c[:60]}`")))
        return self

    def ran(self, pattern: str) -> list[str]:
        rx = re.compile(pattern)
        return [h for h, c in self.calls if rx.search(c)]

    def run(self, host: str, command: Command, *, timeout: float | None = None, check: bool = True,
            stdin: bytes | None = None, device: bool = False) -> CommandResult:
        text = quote_command(command)
        if host in self.silenced:
            raise ConnectError(host, self.silenced[host])
        with self.lock:
            self.calls.append((host, text))
            if device:
                self.devices.append((host, text))
            rule = next((r for r in reversed(self.rules) if (r.host is None or r.host == host)
                         and (r.times is None or r.times > 0) and r.pattern.search(text)), None)
            if rule is not None and rule.times is not None:
                rule.times -= 1
        if rule is not None and rule.error is not None:
            raise rule.error(host, text)
        code, out = (rule.reply(host, text) if rule.reply else (rule.exit_code, rule.stdout)) if rule else (0, "")
        result = CommandResult(host, text, code, out, rule.stderr if rule else "", 0.0)
        if check and not result.ok:
            raise CommandFailed(host, text, result.exit_code, result.stderr or result.stdout)
        return result

    def run_many(self, hosts: Iterable[str], command: Command | Callable[[str], Command], *,
                 timeout: float | None = None, check: bool = True, device: bool = False) -> dict[str, CommandResult]:
        results, errors = self.map(hosts, lambda a: self.run(a, command(a) if callable(command) else command,
                                                             timeout=timeout, check=check, device=device))
        if errors:
            raise MultiHostError(list(errors.values()))
        return results

    def map(self, hosts: Iterable[str], fn: Callable[[str], T], *,
            timeout: float | None = None) -> tuple[dict[str, T], dict[str, GlmodelError]]:
        results: dict[str, T] = {}
        errors: dict[str, GlmodelError] = {}
        for a in dict.fromkeys(hosts):  # in order: a test reads the calls as a sequence
            try:
                results[a] = fn(a)
            except GlmodelError as exc:
                errors[a] = exc
            except Exception as exc:  # as SSHExecutor.map: a bad reply is that host's error, not the caller's
                errors[a] = RemoteError(a, f"unexpected {type(exc).__name__}: {exc}")
        return results, errors

    def drop(self, address: str) -> None:
        """A fake keeps no connection: the dropped hosts are recorded for tests that look."""
        self.dropped.append(address)

    def mark_silent(self, address: str, why: str) -> None:
        self.silenced[address] = why

    def silent(self) -> dict[str, str]:
        return dict(self.silenced)


@dataclass
class FakeEngine:
    """A trial engine whose trials return the next scripted values (kB/s per metric), or fail with ``error``.

    ``script`` holds one entry per trial: a dict of metric values, a string (the trial fails with it) or a
    BaseException to raise (an interrupt). Once the script is used up the last entry repeats.
    """

    script: list[dict[str, float] | str | BaseException]
    name: str = "iozone"
    requests: list[TrialRequest] = field(default_factory=list)
    after_runs: int = 0

    def run(self, request: TrialRequest) -> EngineResult:
        self.requests.append(request)
        step = self.script[min(len(self.requests) - 1, len(self.script) - 1)]
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, str):
            # No host given: the collector finds the one the message names, as for an engine that cannot tell.
            return EngineResult({}, [], {"iozone": step}, ["iozone"], 0.1, error=step)
        return EngineResult(dict(step), [(m, v, "kB/s", v, v) for m, v in step.items()], {"iozone": "fake output"},
                            ["iozone", "-+m", "clients"], 1.0)

    def after_run(self, request: TrialRequest) -> None:
        self.after_runs += 1


GLUSTER_DATA = Path(__file__).parent / "data" / "gluster"


class FakeGluster:
    """Just enough of a Gluster trusted pool for the collector: volumes are created, started, stopped and
    deleted, ``volume info --xml`` tells what exists, every option reads back as Gluster 10.3's defaults."""

    def __init__(self, ex: FakeExecutor) -> None:
        self.volumes: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []
        ex.answer(r"gluster .*--version|gluster --version", lambda h, c: (0, (GLUSTER_DATA / "version_10.3.txt").read_text()))
        ex.answer(r"gluster .*volume info", self._info)
        ex.answer(r"gluster .*volume create", self._create)
        ex.answer(r"gluster .*volume start", lambda h, c: self._set(c, "start", True))
        ex.answer(r"gluster .*volume stop", lambda h, c: self._set(c, "stop", False))
        ex.answer(r"gluster .*volume delete", self._delete)
        ex.on(r"^df -B1 --output=avail", "       Avail\n50000000000\n")  # 50 GB free on every brick
        ex.answer(r"gluster .*volume get .* all", lambda h, c: (0, (GLUSTER_DATA / "volume_get_all.xml").read_text()))

    @staticmethod
    def _name(command: str, verb: str) -> str:
        words = shlex.split(command)
        return words[words.index(verb) + 1]

    def _info(self, host: str, command: str) -> tuple[int, str]:
        name = self._name(command, "info")
        if name not in self.volumes:
            return 1, (GLUSTER_DATA / "volume_info_missing.xml").read_text()
        v = self.volumes[name]
        bricks = "".join(f"<brick uuid=\"u{i}\">{b}<name>{b}</name><hostUuid>u{i}</hostUuid><isArbiter>0</isArbiter>"
                         "</brick>" for i, b in enumerate(v["bricks"]))
        status, status_str = (1, "Started") if v["started"] else (0, "Created")
        return 0, ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><cliOutput><opRet>0</opRet><opErrno>0'
                   f"</opErrno><opErrstr/><volInfo><volumes><volume><name>{name}</name><id>x</id><status>{status}"
                   f"</status><statusStr>{status_str}</statusStr><snapshotCount>0</snapshotCount><brickCount>"
                   f"{len(v['bricks'])}</brickCount><distCount>{len(v['bricks'])}</distCount><replicaCount>1"
                   "</replicaCount><arbiterCount>0</arbiterCount><disperseCount>0</disperseCount><redundancyCount>0"
                   "</redundancyCount><type>0</type><typeStr>Distribute</typeStr><transport>0</transport><bricks>"
                   f"{bricks}</bricks><optCount>0</optCount><options/></volume><count>1</count></volumes></volInfo>"
                   "</cliOutput>")

    def _create(self, host: str, command: str) -> tuple[int, str]:
        name = self._name(command, "create")
        self.volumes[name] = {"bricks": [w for w in shlex.split(command) if ":/" in w], "started": False}
        self.created.append(name)
        return 0, ""

    def _set(self, command: str, verb: str, started: bool) -> tuple[int, str]:
        name = self._name(command, verb)
        if name not in self.volumes:
            return 1, f"volume {verb}: {name}: failed: Volume {name} does not exist"
        self.volumes[name]["started"] = started
        return 0, ""

    def _delete(self, host: str, command: str) -> tuple[int, str]:
        self.volumes.pop(self._name(command, "delete"), None)
        return 0, ""


class FakeProcs:
    """Each host's /proc as the trial-context snapshot reads it: an idle host, except that during the trials
    named in ``busy`` (counted from 0, per host) a process called ``stress`` uses a whole CPU beside them."""

    def __init__(self, ex: FakeExecutor, busy: dict[str, set[int]] | None = None) -> None:
        self.busy = busy or {}
        self.calls: dict[str, int] = {}
        self.ticks: dict[str, int] = {}
        ex.answer(r"/proc/loadavg", self._snapshot)

    def _snapshot(self, host: str, command: str) -> tuple[int, str]:
        k = self.calls[host] = self.calls.get(host, -1) + 1
        if k % 2 and k // 2 in self.busy.get(host, set()):  # the snapshot after a busy trial
            self.ticks[host] = self.ticks.get(host, 0) + 100_000
        stat = f"4242 (stress) R 1 4242 4242 0 -1 4194560 0 0 0 0 {self.ticks.get(host, 0)} 0 0 0 20 0 1 0 1 0 0\n"
        return 0, "0.10 0.10 0.10 1/100 4242\n100\n2\nMemTotal: 8000000 kB\nMemAvailable: 6000000 kB\n---\n" + stat
