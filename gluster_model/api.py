"""glmodel as a library: one function per command, taking what the command line takes (paths, names, numbers)
and returning a result the caller renders (``present``) or reads; nothing here prints.

The CLI parses options, calls one of these and renders; a Python user or a test calls the same function. Heavy
libraries are imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import TypeIs

from .config.cluster import load_cluster
from .errors import GlmodelError, NotFound
from .outputs import check_output

if TYPE_CHECKING:
    from .bench.fio import BrickBaseline
    from .bench.iozone import IozoneRun
    from .bench.iperf import Direction, IperfMatrix
    from .bench.workload import Workload
    from .campaign.preview import Preview
    from .campaign.progress import CampaignSummary, PlanReporter
    from .compare import Comparison
    from .config.cluster import ClusterSpec, Host
    from .gluster.apply import ApplyResult
    from .gluster.volume import VolumeConfig, VolumeInfo
    from .hardware.settings import KnobValue as KnobValue
    from .hardware.settings import KnobValues as KnobValues
    from .model.artifact import ModelFile
    from .model.design_size import DesignSize
    from .model.train import Trained
    from .predict.tune import Advice
    from .predict.scenarios import Question
    from .predict.whatif import Answer
    from .preflight import CheckResult
    from .remote.executor import SSHExecutor
    from .remote.hostkeys import ObservedKey
    from .store.store import Store
    from .verify import Verification, Work

Progress = Callable[[str], None]


def _quiet(message: str) -> None:
    pass


@contextmanager
def session(cluster: Path) -> Iterator[tuple[ClusterSpec, SSHExecutor]]:
    """The cluster file, checked before any connection, and an executor on its hosts."""
    from .remote.executor import SSHExecutor

    spec = load_cluster(cluster)
    with SSHExecutor(spec) as ex:
        yield spec, ex


def reach(cluster: Path) -> None:
    """Connect to every host of the cluster file; Unreachable (one line per host) if any cannot be reached."""
    with session(cluster) as (_, ex):
        ex.reach_all()


def check(cluster: Path, *, min_free_gb: float = 1.0, max_clock_offset: float = 1.0) -> CheckResult:
    from .preflight import run_check

    with session(cluster) as (spec, ex):
        return run_check(ex, min_free_bytes=int(min_free_gb * (1 << 30)), max_clock_offset=max_clock_offset)


@dataclass
class HostKeys:
    """Every host's SSH key as seen now: table rows, the new ones (recordable), changed ones, unreachable ones."""

    cluster: str
    seen: list[tuple[Host, ObservedKey | GlmodelError]]

    def rows(self) -> list[tuple[str, str, str, str, str]]:
        return [(h.name, str(h.ssh.port), "-", "-", str(o)) if isinstance(o, GlmodelError)
                else (h.name, str(o.port), o.key_type, o.fingerprint, o.status) for h, o in self.seen]

    def with_status(self, status: str) -> list[tuple[Host, ObservedKey]]:
        return [(h, o) for h, o in self.seen if not isinstance(o, GlmodelError) and o.status == status]

    def problems(self) -> list[str]:
        changed = [h.name for h, _ in self.with_status("changed")]
        return ([f"host key changed for {', '.join(changed)}: not replaced; if the host was reinstalled, delete its "
                 "line from known_hosts and run trust again"] if changed else []) + \
            [str(o) for _, o in self.seen if isinstance(o, GlmodelError)]


def restore(cluster: Path) -> dict[str, str]:
    """Undo the hardware emulation each host of the cluster recorded; host -> what happened there. On a lab,
    put its nodes back as they were before a plan that was stopped before it could (kill -9)."""
    from .campaign.lab_setting import HardwareSnapshot, restore_lab
    from .hardware.emulation import restore as undo
    from .lab import LabState

    with session(cluster) as (spec, ex):
        state = LabState.load(spec.lab_dir) if spec.lab_dir else None
        if state is not None:
            if state.before_plan is None:
                return {"lab": "nothing to put back"}
            restore_lab(ex, HardwareSnapshot(state.before_plan), lambda m: None)
            return {"lab": "every node's settings put back as they were before the stopped plan"}
        outcomes = undo(ex)
    return {spec.host(a).name: text for a, text in outcomes.items()}


def host_keys(cluster: Path) -> HostKeys:
    """Fetch every host's key (no login) and compare it with its known_hosts file."""
    from .remote.hostkeys import observe_all

    spec = load_cluster(cluster)
    return HostKeys(spec.name, observe_all(spec))


def record_keys(keys: Sequence[tuple[Host, ObservedKey]]) -> None:
    """Record new keys, each in its host's known_hosts file (a changed key is never replaced)."""
    from .remote.hostkeys import record

    for host, observed in keys:
        record(host.ssh.known_hosts, observed)


# -- volumes and engines by hand ------------------------------------------------------------------------------

@contextmanager
def _volume(cluster: Path, volume_file: Path) -> Iterator[tuple[ClusterSpec, VolumeConfig, SSHExecutor]]:
    from .gluster.volume import load_volume

    cfg = load_volume(volume_file)  # both files checked before any connection
    with session(cluster) as (spec, ex):
        yield spec, cfg, ex


@dataclass
class Applied:
    result: ApplyResult
    mounted: dict[str, str]  # client -> mount point (empty without a mount)


def volume_apply(cluster: Path, volume_file: Path, *, mount: bool = True) -> Applied:
    """Create the volume, change only its options, or nothing; then (re)mount it on every client, which picks
    up client-side translator changes (they live in the client process)."""
    from .gluster.apply import apply_volume, remount

    with _volume(cluster, volume_file) as (spec, cfg, ex):
        result = apply_volume(ex, cfg, source=str(volume_file))
        return Applied(result, remount(ex, cfg.name) if mount else {})


def volume_teardown(cluster: Path, volume_file: Path) -> tuple[str, bool]:
    """(volume name, whether it existed)."""
    from .gluster.apply import teardown_volume

    with _volume(cluster, volume_file) as (spec, cfg, ex):
        return cfg.name, teardown_volume(ex, cfg.name)


def volume_show(cluster: Path, volume_file: Path) -> VolumeInfo:
    from .gluster.apply import volume_info

    with _volume(cluster, volume_file) as (spec, cfg, ex):
        info = volume_info(ex, cfg.name)
    if info is None:
        raise GlmodelError(f"volume {cfg.name} does not exist on {spec.name}")
    return info


def bench_iozone(cluster: Path, volume_file: Path, *, threads: int | None = None, file_size: str = "64MB",
                 record_size: str = "64KB", tests: Sequence[str] = ("write", "read", "random"), sync: str = "none",
                 drop: bool = True, progress: Progress = _quiet) -> tuple[IozoneRun, str, Workload]:
    """One iozone trial on the volume (mounted where it is not); threads default to one per client. The values
    are checked as a run's workload (``bench.workload.Workload``) before anything is mounted."""
    from pydantic import ValidationError

    from .bench.iozone import measure_volume
    from .bench.workload import Workload
    from .config.yamlio import validation_message

    with _volume(cluster, volume_file) as (spec, cfg, ex):
        try:
            w = Workload.model_validate({"threads": threads or len(spec.clients), "file_size": file_size,
                                         "record_size": record_size, "tests": list(tests), "sync": sync})
        except ValidationError as exc:
            raise validation_message(exc, "command line", Workload) from None
        return measure_volume(ex, cfg.name, w, drop=drop, progress=progress), cfg.name, w


def bench_iperf(cluster: Path, *, seconds: int = 5, streams: int = 1, directions: Sequence[Direction] = ("write", "read"),
                port: int = 5201, progress: Progress = _quiet) -> IperfMatrix:
    from .bench.iperf import IperfSpec, run_iperf

    ispec = IperfSpec(seconds=seconds, streams=streams, directions=list(directions), port=port)
    with session(cluster) as (spec, ex):
        return run_iperf(ex, ispec, progress=progress)


def bench_disk(cluster: Path, *, size: str = "256MB", runtime: int = 10,
               tests: Sequence[str] = ("seq_write", "seq_read", "rand_read", "rand_write"),
               parallel: bool | Literal["auto"] = "auto", progress: Progress = _quiet) -> list[BrickBaseline]:
    """The fio baseline of every brick path (``bench.fio.DiskSpec``: the values are checked first)."""
    from pydantic import ValidationError

    from .bench.fio import DiskSpec, run_disk
    from .config.yamlio import validation_message

    try:
        dspec = DiskSpec.model_validate({"size": size, "runtime": runtime, "tests": list(tests), "parallel": parallel})
    except ValidationError as exc:
        raise validation_message(exc, "command line", DiskSpec) from None
    with session(cluster) as (spec, ex):
        return run_disk(ex, dspec, progress=progress)


# -- campaigns ------------------------------------------------------------------------------------------------

def collect_preview(cluster: Path, plan_file: Path, *, variant: str | None = None, store: str = "glmodel.db",
                    campaign: str | None = None) -> Preview:
    """What ``collect`` would run (``--dry-run``): no connection, the store only read to calibrate."""
    from .campaign.preview import preview
    from .campaign.records import campaign_name
    from .plan.file import expand, load_plan

    spec = load_cluster(cluster, connecting=False)
    plan = load_plan(plan_file, variant)
    expanded = expand(plan, spec, str(plan_file))
    return preview(spec, plan, expanded, campaign or campaign_name(plan, spec), store)


def changes_to_cluster(cluster: Path, plan_file: Path | None = None, *, variant: str | None = None) -> list[str]:
    """What a campaign (``collect``, or ``verify`` with the plan) will do to a cluster that is not a glmodel lab,
    one sentence each, for the user to agree to before the first change; [] for a lab (glmodel made it)."""
    spec = load_cluster(cluster)
    if spec.lab_dir is not None:
        return []
    from .hardware.emulation import EMULATED
    from .plan.file import load_plan

    bricks = sorted({p for h in spec.servers for p in h.brick_paths})
    lines = [f"on {len(spec.servers)} server(s) and {len(spec.clients)} client(s) of {spec.name}",
             f"create Gluster volumes named gm<hash> on new brick directories under {', '.join(bricks)}, mount "
             f"them on the clients under {spec.hosts[0].mount_root if spec.hosts else '/mnt/glmodel'}, write "
             "benchmark files there;",
             "afterwards unmount, stop and delete each of those volumes and remove their brick directories "
             "(volumes glmodel did not create are never touched);",
             "drop the page cache on every server and client before trials; run iperf3 (ports 5201 and up) and "
             "fio (in .glmodel-fio-* under each brick path, removed after)."]
    if plan_file is not None:
        plan = load_plan(plan_file, variant)
        knobs = [f for f in plan.factors if f in EMULATED]
        if knobs:
            lines.append(f"emulate slower hardware ({', '.join(knobs)}): each host records how to undo it first; "
                         "undone at the end, on failure and on Ctrl-C, or by `glmodel restore --cluster "
                         f"{cluster}`.")
    return lines


def collect(cluster: Path, plan_file: Path, *, variant: str | None = None, store: str = "glmodel.db",
            campaign: str | None = None, fail_fast: bool = False,
            reporter: PlanReporter | None = None) -> list[CampaignSummary]:
    """Run every run of the plan not yet done in the store (failed and interrupted ones again)."""
    from .campaign.plan_run import run_plan
    from .campaign.records import campaign_name
    from .plan.file import expand, load_plan
    from .store import open_store

    spec = load_cluster(cluster)
    plan = load_plan(plan_file, variant)
    expanded = expand(plan, spec, str(plan_file))
    with session(cluster) as (_, ex):
        ex.reach_all()  # every host first: one that cannot be reached stops it before the store is written
        with open_store(store) as st:
            return run_plan(ex, plan, expanded, st, base=campaign or campaign_name(plan, spec),
                            fail_fast=fail_fast, reporter=reporter)


# -- models --------------------------------------------------------------------------------------------------

def fit(out: Path, *, store: str = "glmodel.db", data: Path | None = None, campaigns: Sequence[str] = (),
        with_outliers: bool = False, where: Sequence[str] = (), **options: Any) -> Trained:
    """Fit every metric of the store's (or an exported table's) measured trials (those matching every ``where``
    NAME=VALUE) and write the model file; ``options`` are ``model.train.train``'s (family, metrics, models, seed,
    level, samples, bootstrap)."""
    from .dataset import model_frame
    from .model.train import train

    check_output(out, "--out")  # before the fit, which may take minutes
    frame, where = model_frame(store, data, campaigns, with_outliers=with_outliers, where=where)
    return train(frame, where, out, **options)


def design_size(*, store: str = "glmodel.db", data: Path | None = None, campaigns: Sequence[str] = (),
                metrics: Sequence[str] = (), csv_out: Path | None = None, figure: Path | None = None,
                **options: Any) -> tuple[list[DesignSize], str]:
    """``model.design_size.compare`` on the trials, its curve written as CSV and drawn when asked; the results
    and where the trials came from."""
    from .dataset import model_frame
    from .model.design_size import compare, curve_frame
    from .model.fit import metrics_asked

    for path, option, suffixes in ((csv_out, "--csv", ()), (figure, "--figure", (".png",))):
        if path is not None:
            check_output(path, option, suffixes)  # the figure is drawn by the caller (present.model)
    frame, where = model_frame(store, data, campaigns)
    asked = metrics_asked(frame, metrics)
    if not asked:
        raise GlmodelError(f"no throughput metric in {where}")
    results = compare(frame, asked, **options)
    if csv_out is not None:
        curve_frame(results).to_csv(csv_out, index=False)
    return results, where


# -- what-if and verification ---------------------------------------------------------------------------------

def predict(model_file: Path, *, scenarios: Path | None = None, sets: Sequence[str] = (),
            metrics: Sequence[str] = (), level: float | None = None, use: str | None = None) -> Answer:
    """The what-if answer for a scenario file or ``--set`` candidates on top of the baseline (``present.predict``
    draws it, as tables, CSV or a figure)."""
    from .predict.whatif import what_if

    mf, q = _asked(model_file, scenarios, sets, metrics)
    return what_if(mf, q, metrics=list(metrics) or None, level=level, use=use)


def _asked(model_file: Path, scenarios: Path | None, sets: Sequence[str] = (),
           metrics: Sequence[str] = ()) -> tuple[ModelFile, Question]:
    """The model file and the question put to it (a scenario file, or ``--set`` candidates on the baseline),
    checked against the model's inputs and the settings it was measured at: the one reading of a question
    that predict, verify and the report share."""
    from .model import artifact
    from .predict.scenarios import question
    from .predict.whatif import measured_settings, model_inputs

    mf = artifact.load(model_file)
    asked = list(metrics) or mf.metrics
    return mf, question(model_inputs(mf, asked), scenarios, sets, measured_settings(mf, asked))


@dataclass
class Answered:
    """A model and a question answered from it, computed once before anything is rendered: the model file,
    predict's answer and what verify measured of it in the store (both as those commands compute them), the
    model's domains."""

    model: ModelFile
    path: Path
    question: Path | None = None
    answer: Answer | None = None
    verification: Verification | None = None
    domains: dict[str, Any] = field(default_factory=dict)


def answered(store: Store, model: Path | None, question: Path | None = None) -> Answered | None:
    """Read and check the model file and the question, and answer it (``predict``'s answer, ``verify``'s record
    in ``store``); None without a model. A missing or forged model file stops here, before anything is written."""
    from .model import artifact
    from .predict.whatif import what_if
    from .verify import from_store

    if question is not None and model is None:
        raise GlmodelError("--scenarios needs --model: the question is answered with a fitted model")
    if model is None:
        return None
    if question is None:
        return Answered(artifact.load(model), model)
    mf, q = _asked(model, question)
    answer = what_if(mf, q)
    return Answered(mf, model, question, answer, from_store(store, mf, q), {m: mf.domain(m) for m in mf.metrics})


def tune(model_file: Path, *, sets: Sequence[str] = (), metrics: Sequence[str] = (), level: float = 0.9,
         use: str | None = None, volume: str = "VOLNAME", scenarios_out: Path | None = None) -> Advice:
    """The volume options the model recommends for a workload, per metric (and balanced over those named); with
    ``scenarios_out`` also written as a what-if file whose candidates `glmodel verify` can build and measure."""
    from .model import refit_pool

    # The change intervals of boosted trees (most models tune is asked about) cost hundreds of refits: worker
    # processes start first, so that their import of scikit-learn overlaps this process's imports and loading
    # (for a model without trees they are ended unused)
    with refit_pool.workers():
        import yaml

        from .gluster.volume import check_volume_name
        from .model import artifact
        from .predict.tune import tune as advise

        if scenarios_out is not None:
            check_output(scenarios_out, "--scenarios-out", (".yaml", ".yml"))
        advice = advise(artifact.load(model_file), sets, metrics, level, use, check_volume_name(volume, "--volume"))
    if scenarios_out is not None:
        scenarios_out.write_text("# glmodel tune's advice as a what-if question: Gluster's defaults against each "
                                 "recommendation that differs from them and each metric's pitfall (the option "
                                 "change that costs it most)\n" + yaml.safe_dump(advice.question(), sort_keys=False))
    return advice


def verify(cluster: Path, model_file: Path, scenarios: Path, plan_file: Path, *, variant: str | None = None,
           store: str = "glmodel.db", metrics: Sequence[str] = (), level: float | None = None,
           fail_fast: bool = False, dry_run: bool = False,
           reporter: PlanReporter | None = None) -> Verification | Work:
    """Measure the question's scenarios and set them beside the predictions; with ``dry_run`` only the plan of
    it (each scenario's run and campaign), built from the files alone."""
    from .plan.file import load_plan
    from .verify import prepare
    from .verify import verify as measure

    spec = load_cluster(cluster, connecting=not dry_run)
    plan = load_plan(plan_file, variant)
    mf, q = _asked(model_file, scenarios, (), metrics)
    if dry_run:
        return prepare(spec, mf, q, plan, list(metrics) or None)
    return measure(spec, mf, q, plan, store, metrics=list(metrics) or None, level=level, fail_fast=fail_fast,
                   reporter=reporter)


# -- runs, export, report -------------------------------------------------------------------------------------

def runs_list(store: str, campaign: str | None = None, status: str | None = None) -> Any:
    """The runs of a store (``glmodel runs list``), read-only."""
    from .store.views import run_list

    with open_for_reading(store) as st:
        return run_list(st, campaign, status)


def runs_design(store: str, campaign: str) -> Any:
    """An adaptive campaign's decisions, round by round (``glmodel runs design``)."""
    from .store.views import design_log

    with open_for_reading(store) as st:
        return design_log(st, campaign)


def runs_show(store: str, run_id: int, raw_trial: int | None = None) -> Any:
    """One run with every trial, and one trial's raw output (``glmodel runs show``)."""
    from .store.views import run_detail

    with open_for_reading(store) as st:
        return run_detail(st, run_id, raw_trial)


def export(store: str | Sequence[str], out: Path, fmt: str = "csv", campaign: str | None = None,
           all_trials: bool = False) -> Any:
    """The trials of a store (or several, pooled) as one tidy table written to ``out`` (``glmodel export``);
    the frame written."""
    from .dataset import export_trials
    from .outputs import check_output

    return export_trials(store, check_output(out, "--out"), fmt, campaign, all_trials)


# -- the local lab -----------------------------------------------------------------------------------------------

def lab_up(lab_dir: Path, *, nodes: int = 3, ssh_port: int = 2222, hardware: Mapping[str, KnobValue] | None = None,
           brick_size: int = 4 << 30, client_nodes: int = 0, progress: Callable[[str], None] | None = None,
           subnet: str | None = None) -> Any:
    """Bring up a local lab of ``nodes`` nodes (``glmodel lab up``); its state."""
    from .lab import lab_up as up

    return up(lab_dir, nodes=nodes, ssh_port=ssh_port, progress=progress or (lambda m: None),
              hardware=dict(hardware or {}), brick_size=brick_size, client_nodes=client_nodes, subnet=subnet)


def lab_node(lab_dir: Path, nodes: Sequence[str] = (), settings: Mapping[str, KnobValue] | None = None,
             brick_size: int | None = None, progress: Callable[[str], None] | None = None) -> Any:
    """Give lab nodes hardware settings, or read them with none (``glmodel lab node``, ``link``, ``brick``)."""
    from .lab.hardware import set_nodes

    return set_nodes(lab_dir, tuple(nodes), dict(settings or {}), brick_size=brick_size,
                     progress=progress or (lambda m: None))


def lab_down(lab_dir: Path, progress: Callable[[str], None] | None = None) -> None:
    """Tear a local lab down (``glmodel lab down``)."""
    from .lab import lab_down as down

    down(lab_dir, progress=progress or (lambda m: None))


def lab_status(lab_dir: Path) -> Any:
    """A lab's state and each node's daemons and peers (``glmodel lab status``)."""
    from .lab import lab_status as status

    return status(lab_dir)


def parse_hardware(kind: str, text: str) -> KnobValues:
    """One hardware setting's text (``--link 1gbit``) parsed; ValueError saying what is allowed."""
    from .hardware.settings import parse_setting

    return parse_setting(kind, text)


def is_verify_preview(result: Verification | Work) -> TypeIs[Work]:
    """Whether ``verify`` answered a dry run (what it would build and measure) rather than a verification."""
    from .verify import Work

    return isinstance(result, Work)


def compare(store: str, against: str, *, campaign: str | None = None, against_campaign: str | None = None,
            margin: float = 0.05, level: float = 0.95, tolerance: float = 0.10) -> Comparison:
    """A campaign against another, the last one(s) of its plan, or another store's (``glmodel compare``): each
    configuration and metric judged slower, faster, the same within ``margin``, or undecided; read-only."""
    from .compare import compare as judge

    return judge(store, against, campaign=campaign, against_campaign=against_campaign, margin=margin, level=level,
                 tolerance=tolerance)


def migrate(store: str) -> tuple[int, int]:
    """Bring a store to this glmodel's schema (``glmodel migrate``); the versions before and after."""
    from .store import open_store
    from .store.migrate import current_version

    with open_for_reading(store) as st:
        before = st.version
    with open_store(store) as st, st.tx() as conn:
        return before, current_version(conn)


def open_for_reading(store: str) -> Any:
    """A store opened read-only (``runs``, ``report``): never created, migrated or changed."""
    from .store import open_store

    return open_store(store, create=False)


__all__ = ["Answered", "Applied", "HostKeys", "NotFound", "answered", "bench_disk", "bench_iozone", "bench_iperf",
           "changes_to_cluster", "check", "collect", "collect_preview", "compare", "design_size", "export", "fit",
           "host_keys", "is_verify_preview", "lab_down", "lab_node", "lab_status", "lab_up", "migrate",
           "open_for_reading", "parse_hardware", "predict", "reach", "record_keys", "restore", "runs_design", "runs_list", "runs_show", "session", "tune", "verify", "volume_apply",
           "volume_show", "volume_teardown"]
