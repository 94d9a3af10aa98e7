"""Results store: SQLAlchemy Core tables, migrations, and the campaign's reads and writes.

The store's names are imported on first use: the identities in ``store.identity`` are read by commands that never
open a store (fit, predict, tune), which should not pay for importing SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store import DEFAULT_STORE, Store, TrialRecord, open_store

__all__ = ["DEFAULT_STORE", "Store", "TrialRecord", "open_store"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
