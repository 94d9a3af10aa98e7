"""Usable capacity from raw capacity and the volume layout: the other half of a purchase decision."""

from __future__ import annotations


def layout_of(layout: str | None, replica: float | None, disperse: float | None) -> str:
    """The layout a scenario names, or the one its replica/disperse counts imply."""
    if layout:
        return layout
    if disperse and disperse > 0:
        return "disperse"
    if replica and replica > 1:
        return "replicate"
    return "distribute"


def usable_fraction(layout: str, replica: float = 1, disperse: float = 0, redundancy: float = 0) -> float:
    """Share of raw capacity that holds user data: 1/replica for replicate, (d−r)/d for disperse, 1 otherwise."""
    if layout == "replicate":
        if replica < 1:
            raise ValueError(f"replica {replica:g}: must be at least 1")
        return 1 / replica
    if layout == "disperse":
        if not 0 <= redundancy < disperse:
            raise ValueError(f"disperse {disperse:g} with redundancy {redundancy:g}: need 0 ≤ redundancy < disperse")
        return (disperse - redundancy) / disperse
    return 1.0
