"""Knobs set by commands on a host (``hardware.knob.HostStep``), one module each defining ``KNOB``; every module
here is a knob (``hardware.settings`` finds them at import)."""
