"""Tables of the results store (SQLAlchemy Core) and the schema's migration history.

Features are typed columns of ``runs`` (what the modelling layer filters and groups on) and, complete, the
``config`` JSON (what reproduces the run). Raw engine output is kept zlib-compressed beside the trial whose
numbers came from it. Nothing secret is stored: the cluster file is kept without its ``ssh`` section.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

SCHEMA_VERSION = 8

metadata = MetaData()

schema_info = Table(
    "glmodel_schema", metadata,
    Column("id", Integer, primary_key=True),
    Column("version", Integer, nullable=False),
)

campaigns = Table(
    "campaigns", metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("plan_name", String(100), nullable=False),
    Column("plan_hash", String(64), nullable=False),
    Column("plan", JSON, nullable=False),
    Column("cluster_name", String(100), nullable=False),
    Column("cluster", JSON, nullable=False),
    Column("hardware_key", String(64), nullable=True),
    Column("glmodel_version", String(40), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # Version 5: what the campaign is for and what it measured at (store.identity), never read from its name.
    Column("purpose", String(20), nullable=False, server_default="training"),
    Column("setting", JSON, nullable=True),          # {knob: canonical value}; {} at the cluster's own hardware
    Column("again_of", String(200), nullable=True),  # the campaign it measures again (a plan's drift)
    # Version 6: the look of an interleaved comparison a campaign is (identity.Look); all three null elsewhere.
    Column("comparison", String(200), nullable=True),  # what the comparison's looks share
    Column("side", String(1), nullable=True),          # A or B
    Column("look", Integer, nullable=True),            # 1, 2, ... a side (or a search's confirmation, below)
    # Version 7: the round of an option search a campaign holds (identity.SearchStep); null elsewhere.
    Column("search", String(200), nullable=True),       # the search's name: what its rounds' campaigns share
    Column("search_round", String(12), nullable=True),  # screening, more or confirm (its look in ``look``)
)

hosts = Table(
    "hosts", metadata,
    Column("id", Integer, primary_key=True),
    Column("campaign_id", ForeignKey("campaigns.id", ondelete="CASCADE"), nullable=False),
    Column("address", String(255), nullable=False),
    Column("name", String(255), nullable=False),
    Column("roles", String(40), nullable=False),
    Column("cpu_model", String(200)),
    Column("cpus", Integer),
    Column("ram_bytes", BigInteger),
    Column("kernel", String(100)),
    Column("os", String(200)),
    Column("gluster_version", String(40)),
    Column("nic_speed_mbps", Integer),
    Column("facts", JSON, nullable=False),
    UniqueConstraint("campaign_id", "address"),
)

baselines = Table(
    "baselines", metadata,
    Column("id", Integer, primary_key=True),
    Column("hardware_key", String(64), nullable=False),
    Column("campaign_id", ForeignKey("campaigns.id", ondelete="SET NULL"), nullable=True),
    Column("kind", String(20), nullable=False),        # network | disk
    Column("host", String(255), nullable=False),       # client (network) or server (disk)
    Column("target", String(1000), nullable=False),    # server (network) or brick path (disk)
    Column("test", String(40), nullable=False),        # write/read (network); seq_read, ... (disk)
    Column("value", Float, nullable=True),
    Column("unit", String(20), nullable=False),
    Column("error", Text, nullable=True),
    Column("raw", LargeBinary, nullable=True),
    Column("measured_at", DateTime(timezone=True), nullable=False),
    # Version 8: the key of what can move this kind of figure (campaign.records.baseline_key): a later setting
    # that changed only other knobs keeps the baseline (copied under its own hardware key). Null: never kept so.
    Column("kind_key", String(64), nullable=True),
)
Index("ix_baselines_hw", baselines.c.hardware_key)
Index("ix_baselines_kind", baselines.c.kind_key)

runs = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True),
    Column("campaign_id", ForeignKey("campaigns.id", ondelete="CASCADE"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("config_hash", String(64), nullable=False),
    Column("volume_key", String(64), nullable=False),
    Column("status", String(20), nullable=False),   # pending | running | done | failed
    Column("attempts", Integer, nullable=False, default=0),
    Column("unstable", Boolean, nullable=False, default=False),
    Column("regime", String(20)),                  # cached | uncached | direct
    # typed features
    Column("layout", String(20), nullable=False),
    Column("replica", Integer),
    Column("disperse", Integer),
    Column("redundancy", Integer),
    Column("shard", Boolean, nullable=False),
    Column("shard_block_size", BigInteger),
    Column("write_behind", Boolean),
    Column("read_ahead", Boolean),
    Column("io_cache", Boolean),
    Column("quick_read", Boolean),
    Column("md_cache", Boolean),
    Column("cache_size", BigInteger),
    Column("file_size", BigInteger, nullable=False),
    Column("record_size", BigInteger, nullable=False),
    Column("threads", Integer, nullable=False),
    Column("sync", String(10), nullable=False),
    Column("servers", Integer),
    Column("clients", Integer),
    Column("features", JSON, nullable=False),
    Column("config", JSON, nullable=False),
    Column("error", Text),
    Column("error_host", String(255)),
    Column("error_command", Text),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    UniqueConstraint("campaign_id", "config_hash"),
)

trials = Table(
    "trials", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("warmup", Boolean, nullable=False),
    Column("outlier", Boolean, nullable=False, default=False),
    Column("status", String(10), nullable=False),   # ok | failed
    Column("error", Text),
    Column("file_size", BigInteger, nullable=False),  # after auto-sizing
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("seconds", Float, nullable=False),          # wall time of the trial, driver steps included
    Column("engine_seconds", Float, nullable=False),   # the engine's own run time
    Column("argv", JSON, nullable=False),
    Column("context", JSON),                           # what could have disturbed it (trial_context.summary)
    Column("flagged_because", Text),                   # why it is an outlier, when it is one
    UniqueConstraint("run_id", "idx"),
)

measurements = Table(
    "measurements", metadata,
    Column("id", Integer, primary_key=True),
    Column("trial_id", ForeignKey("trials.id", ondelete="CASCADE"), nullable=False),
    Column("metric", String(40), nullable=False),
    Column("value", Float, nullable=False),
    Column("unit", String(20), nullable=False),
    Column("min_value", Float),
    Column("max_value", Float),
    UniqueConstraint("trial_id", "metric"),
)

raw_outputs = Table(
    "raw_outputs", metadata,
    Column("id", Integer, primary_key=True),
    Column("trial_id", ForeignKey("trials.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(40), nullable=False),       # iozone stdout, client file, ...
    Column("encoding", String(10), nullable=False),   # zlib
    Column("size", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
)

# Version 2: what an adaptive design decided, round by round: each chosen run with the reason, and each round's
# figures (runs so far, how much the predictions moved, the importance ranking, whether it stopped and why).
design_log = Table(
    "design_log", metadata,
    Column("id", Integer, primary_key=True),
    Column("campaign_id", ForeignKey("campaigns.id", ondelete="CASCADE"), nullable=False),
    Column("round", Integer, nullable=False),
    Column("config_hash", String(64), nullable=True),  # a chosen run; NULL for the round's summary
    Column("reason", Text, nullable=False),
    Column("figures", JSON, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)


# The store's one campaign writer (collect or verify) while it runs: a second one refuses instead of measuring
# the same runs twice on the same cluster. One row at most (id 1).
writers = Table(
    "writers", metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(200), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("what", String(300), nullable=False),
    Column("since", DateTime(timezone=True), nullable=False),
)
