"""What a campaign tells its caller as it goes (the CLI draws progress from it), and what it sums up at the end.

The protocols are the only thing the campaign layer knows of its audience: the terminal's progress bar lives in
``present``, a Python caller may pass its own, and the silent ones serve tests and scripts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import ContextManager, Protocol

from ..plan.factors import RunSpec

class Reporter(Protocol):
    """What the runner tells its caller (the CLI draws a progress bar from it)."""

    def status(self, message: str) -> None: ...

    def note(self, message: str) -> None: ...  # a line that stays (what was changed on a host, say)

    def run_started(self, position: int, total: int, run: RunSpec, eta_s: float | None) -> None: ...

    def run_finished(self, position: int, total: int, run: RunSpec, line: str, ok: bool) -> None: ...


class SilentReporter:
    def status(self, message: str) -> None:
        pass

    def note(self, message: str) -> None:
        pass

    def run_started(self, position: int, total: int, run: RunSpec, eta_s: float | None) -> None:
        pass

    def run_finished(self, position: int, total: int, run: RunSpec, line: str, ok: bool) -> None:
        pass


@dataclass
class CampaignSummary:
    campaign: str
    total: int
    already_done: int = 0
    done: int = 0
    failed: int = 0
    trials: int = 0
    engine_seconds: float = 0.0
    wall_seconds: float = 0.0
    baseline_seconds: float = 0.0
    # From the campaign's start to its first run's: what its hardware setting cost before measuring anything
    # (leftover volumes removed, the setting applied, host facts, baselines, the first volume built).
    first_run_seconds: float | None = None
    failures: list[str] = field(default_factory=list)
    # The baselines this campaign kept from another setting's (``baselines.keep``): kind -> the campaign that
    # measured it.
    kept: dict[str, str] = field(default_factory=dict)

class PlanReporter(Protocol):
    """What ``run_plan`` tells its caller, campaign by campaign."""

    def campaign(self, name: str, total: int, done: int, where: str) -> ContextManager[Reporter]: ...

    def finished(self, summary: CampaignSummary) -> None: ...

    def note(self, message: str) -> None: ...


class SilentPlanReporter:
    @contextmanager
    def campaign(self, name: str, total: int, done: int, where: str) -> Iterator[Reporter]:
        yield SilentReporter()

    def finished(self, summary: CampaignSummary) -> None:
        pass

    def note(self, message: str) -> None:
        pass

