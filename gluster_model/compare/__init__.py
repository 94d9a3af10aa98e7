"""`glmodel compare`: did a change make the cluster slower? Two campaigns' trials matched by configuration and
metric, each row a ratio with its interval and a verdict (``verdicts``), the sides read from one store or two
(``sides``)."""

from __future__ import annotations

from contextlib import ExitStack

from ..store import open_store
from .sides import (MismatchError, Side, history, interleaved, looks_like_store, parse_against, read_side,
                    this_side)
from .verdicts import LEVEL, MARGIN, TOLERANCE, Comparison, Row, judge

__all__ = ["Comparison", "MismatchError", "Row", "Side", "compare"]


def compare(store: str, against: str, *, campaign: str | None = None, against_campaign: str | None = None,
            margin: float = MARGIN, level: float = LEVEL, tolerance: float = TOLERANCE) -> Comparison:
    """Campaign ``campaign`` of ``store`` (its latest by default) as side B against side A: ``against`` is a
    campaign of the store, ``last`` / ``last:N`` (the campaigns of the same plan and cluster before it),
    another store (``against_campaign`` one of its campaigns, else its latest), or ``sides`` (the two sides of
    the interleaved comparison ``campaign`` belongs to, the session's drift pooled over its configurations).
    Stores are read, never changed."""
    with ExitStack() as stack:
        st = stack.enter_context(open_store(store, create=False))
        if against.strip() == "sides":
            if against_campaign:
                raise MismatchError("--against-campaign goes with --against STORE, not with sides")
            a, b, apart = interleaved(st, campaign)
            return judge(a, b, margin=margin, level=level, tolerance=tolerance, pooled_drift=True,
                         sides_apart=apart)
        current = this_side(st, campaign)
        b = read_side(st, [current])
        n = parse_against(against)
        if n is not None:
            if against_campaign:
                raise MismatchError("--against-campaign goes with --against STORE, not with last or last:N")
            a = read_side(st, history(st, current, n))
        elif st.campaign(against) is not None:
            if against_campaign:
                raise MismatchError(f"--against-campaign goes with --against STORE; {against} is a campaign of {st.where}")
            a = read_side(st, [this_side(st, against, "--against")])
        elif looks_like_store(against):
            other = stack.enter_context(open_store(against, create=False))
            if other.where == st.where:
                raise MismatchError(f"--against {against}: the same store as --store; name a campaign of it "
                                    "(--against CAMPAIGN) or last")
            a = read_side(other, [this_side(other, against_campaign, "--against-campaign")])
        else:
            raise MismatchError(f"--against {against}: not a campaign of {st.where}, nor a store file or URL, nor "
                                "last or last:N")
    return judge(a, b, margin=margin, level=level, tolerance=tolerance)
