"""The registry of trial engines: the plan's ``workload.engine`` names one of these."""

from __future__ import annotations

from collections.abc import Mapping

from .dd_trial import DdEngine
from .engine import TrialEngine
from .engine_specs import ENGINE_SPECS
from .fio_trial import FioEngine
from .iozone import IozoneEngine

TRIAL_ENGINES: Mapping[str, TrialEngine] = {e.name: e for e in (IozoneEngine(), DdEngine(), FioEngine())}
assert set(TRIAL_ENGINES) == set(ENGINE_SPECS), "an engine runs trials without its spec, or the reverse"
