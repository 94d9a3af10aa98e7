"""Results store: SQLAlchemy Core tables, migrations, and the campaign's reads and writes."""

from .store import DEFAULT_STORE, Store, TrialRecord, open_store

__all__ = ["DEFAULT_STORE", "Store", "TrialRecord", "open_store"]
