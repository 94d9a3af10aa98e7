"""Every campaign of a store as one table, the verification ones included (`glmodel export` leaves those out of a
whole-store export), with the store's file name in its `store` column (not where it lay on the collecting
machine): what the proofs' collect scripts ship to data/.

Run: .venv/bin/python benchmarks/export_all_campaigns.py STORE OUT.csv
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from gluster_model.dataset import trial_frame
from gluster_model.store.store import open_store


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    store, out = sys.argv[1], Path(sys.argv[2])
    with open_store(store, create=False) as st:
        frames = [trial_frame(st, c.name) for c in st.campaigns()]
    table = pd.concat([f for f in frames if len(f)], ignore_index=True)
    table["store"] = Path(store).name
    table.to_csv(out, index=False)


if __name__ == "__main__":
    main()
