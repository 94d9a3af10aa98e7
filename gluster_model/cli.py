"""Command line: each command parses its options, calls one library function (mostly ``api``) and renders the
result through ``present``. No logic of its own.

Heavy libraries (pydantic, paramiko, pandas, statsmodels, ...) are imported inside the commands, never at
module level, so `glmodel --help` answers fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn, TypeVar

import click

from .present.cli_kit import (HARDWARE_KNOBS, SIZE, STRATEGIES, Failure, GlmodelGroup, Parsed, agree_to_changes,
                              checked_outputs, echo_json as _echo_json, parse_ints, run, setting_type as _setting,
                              working)

T = TypeVar("T")
FC = TypeVar("FC", bound="Callable[..., Any] | click.Command")

if TYPE_CHECKING:
    from collections.abc import Callable

    from .api import KnobValues

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
DEFAULT_LAB_DIR = Path("glmodel-lab")


@click.group(cls=GlmodelGroup, context_settings=CONTEXT)
@click.option("--debug", is_flag=True, help="Show full tracebacks and debug logging.")
@click.version_option(package_name="glmodel", prog_name="glmodel")
def cli(debug: bool) -> None:
    """glmodel: configure, benchmark, store, model and predict GlusterFS throughput.

    \b
    Start with a local lab:   glmodel lab up --nodes 3
    Check a cluster:          glmodel check --cluster glmodel-lab/lab.yaml
    """
    if debug:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(asctime)s %(name)s %(message)s")


def _console() -> Any:
    from .present.console import console

    return console()


json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON instead of tables.")


yes_option = click.option("--yes", is_flag=True, help="Agree to what the command will do to a cluster that is not "
                          "a glmodel lab without being asked (for scripts); without a terminal it is required.")


def model_file_option(required: bool = True, help: str = "Model file written by `glmodel fit`.") -> Callable[[FC], FC]:
    """The one --model option of the commands that read a model file (fit's --model names challengers)."""
    option: Callable[[FC], FC] = click.option("--model", "model_file", type=click.Path(path_type=Path),
                                              required=required, default=None, help=help)
    return option
campaigns_option = click.option("--campaign", "campaigns", multiple=True,
                                help="Only these campaigns (repeatable; default: every one).")
cluster_option = click.option(
    "--cluster", "-c", "cluster", type=click.Path(path_type=Path), required=True,
    help="Cluster file (YAML) or Ansible inventory (INI/YAML) with server and client groups.",
)


# -- check / trust -------------------------------------------------------------------------------------------

@cli.command(short_help="Preflight every host of a cluster: SSH, Gluster, tools, bricks, clocks.")
@cluster_option
@click.option("--min-free-gb", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Free space each brick path needs.")
@click.option("--max-clock-offset", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Largest clock offset (seconds) from the median host.")
@json_option
def check(cluster: Path, min_free_gb: float, max_clock_offset: float, as_json: bool) -> None:
    """Check that every host is reachable and ready for a campaign; exit 1 if any is not.

    Example: glmodel check --cluster glmodel-lab/lab.yaml
    """
    from . import api
    from .present.checks import check_table

    result = api.check(cluster, min_free_gb=min_free_gb, max_clock_offset=max_clock_offset)
    _echo_json(result) if as_json else _console().print(check_table(result))
    if result.failure():
        raise Failure(str(result.failure()))
    click.echo(f"all {len(result.reports)} host(s) ready", err=as_json)


@cli.command(short_help="Show each host's SSH key fingerprint; record new keys when asked.")
@cluster_option
@click.option("--yes", "-y", is_flag=True, help="Record every new key without asking.")
def trust(cluster: Path, yes: bool) -> None:
    """Fetch every host's SSH host key, show its fingerprint and whether known_hosts has it, and record
    new keys only after confirmation (or with --yes). A changed key is never replaced.

    Example: glmodel trust --cluster fist.yaml
    """
    from . import api
    from .present.checks import trust_table

    keys = api.host_keys(cluster)
    _console().print(trust_table(keys.cluster, keys.rows()))
    new = keys.with_status("new")
    if new and (yes or (sys.stdin.isatty() and click.confirm(f"Record {len(new)} new key(s)?", default=False))):
        api.record_keys(new)
        click.echo(f"recorded {len(new)} key(s) in {new[0][0].ssh.known_hosts}")
    elif new:
        click.echo(f"{len(new)} new key(s) not recorded; compare the fingerprints, then run again with --yes")
    if keys.problems():
        raise Failure("; ".join(keys.problems()))


@cli.command(short_help="Undo the emulated hardware (link, disk, RAM, CPU) glmodel left on a cluster's hosts.")
@cluster_option
def restore(cluster: Path) -> None:
    """Undo whatever emulated hardware each host recorded (safe to run again); one line per host, exit 1 if a
    host could not be reached (run it again once it can).

    Example: glmodel restore --cluster fist.yaml
    """
    from . import api

    outcomes = api.restore(cluster)
    click.echo("\n".join(f"{host}: {text}" for host, text in outcomes.items()))
    missed = [h for h, text in outcomes.items() if text.startswith("not reached")]
    if missed:
        raise Failure(f"{len(missed)} host(s) not restored: {', '.join(missed)}")


# -- volume / bench ---------------------------------------------------------------------------------------

volume_option = click.option("--volume", "-v", "volume_file", type=click.Path(path_type=Path), required=True,
                             help="Volume file (YAML): name, layout, replica/disperse, shard, translators, options.")


@cli.group(short_help="Create/reconfigure, show and tear down a Gluster volume from a volume file.")
def volume() -> None:
    """Gluster volumes described by a YAML volume file, applied over SSH."""


@volume.command("apply", short_help="Create the volume, or change only its options, then mount it on clients.")
@cluster_option
@volume_option
@click.option("--no-mount", is_flag=True, help="Do not mount the volume on the clients.")
def volume_apply(cluster: Path, volume_file: Path, no_mount: bool) -> None:
    """Apply a volume file: create it if absent, reconfigure options if only they differ, nothing if it
    already matches. Every option is read back from the server.

    Example: glmodel volume apply --cluster glmodel-lab/lab.yaml --volume experiments/volumes/replica3.yaml
    """
    from . import api
    from .present.volume import applied_lines

    applied = api.volume_apply(cluster, volume_file, mount=not no_mount)
    click.echo("\n".join(applied_lines(applied.result, applied.mounted)))


@volume.command("teardown", short_help="Unmount, stop and delete the volume and its brick directories.")
@cluster_option
@volume_option
def volume_teardown(cluster: Path, volume_file: Path) -> None:
    """Example: glmodel volume teardown --cluster glmodel-lab/lab.yaml --volume replica3.yaml"""
    from . import api

    name, existed = api.volume_teardown(cluster, volume_file)
    click.echo(f"volume {name}: {'removed' if existed else 'did not exist'}")


@volume.command("show", short_help="Show the volume as the servers have it (type, bricks, options set).")
@cluster_option
@volume_option
def volume_show(cluster: Path, volume_file: Path) -> None:
    """Example: glmodel volume show --cluster glmodel-lab/lab.yaml --volume replica3.yaml"""
    from . import api
    from .present.volume import info_lines

    click.echo("\n".join(info_lines(api.volume_show(cluster, volume_file))))


@cli.group(short_help="Run one benchmark engine on a cluster: iozone, iperf (network matrix), disk (fio).")
def bench() -> None:
    """Benchmark engines run by hand; `glmodel collect` runs them as campaigns."""


@bench.command("iozone", short_help="Distributed iozone on a mounted volume; a table or --json.")
@cluster_option
@volume_option
@click.option("--threads", "-t", type=click.IntRange(1, 1024), default=None, help="Threads (default: one per client).")
@click.option("--file-size", "-s", default="64MB", show_default=True, help="File size per thread.")
@click.option("--record-size", "-r", default="64KB", show_default=True, help="Record (block) size.")
@click.option("--test", "tests", type=click.Choice(["write", "read", "random"]), multiple=True,
              default=("write", "read", "random"), show_default=True, help="Tests to run (repeatable).")
@click.option("--sync", type=click.Choice(["none", "osync", "odirect"]), default="none", show_default=True,
              help="O_SYNC (-o) or O_DIRECT (-I).")
@click.option("--drop-caches/--keep-caches", default=True, show_default=True,
              help="Drop page caches on clients and servers first.")
@json_option
def bench_iozone(cluster: Path, volume_file: Path, threads: int | None, file_size: str, record_size: str,
                 tests: tuple[str, ...], sync: str, drop_caches: bool, as_json: bool) -> None:
    """Mounts the volume if needed, runs distributed iozone (-+m) across the clients, prints kB/s per test.

    Example: glmodel bench iozone --cluster glmodel-lab/lab.yaml --volume replica3.yaml -t 3 -s 16MB
    """
    from . import api
    from .present.bench import iozone_table
    from .present.console import spinner

    with spinner(not as_json) as progress:
        run, name, workload = api.bench_iozone(cluster, volume_file, threads=threads, file_size=file_size,
                                               record_size=record_size, tests=tests, sync=sync, drop=drop_caches,
                                               progress=progress)
    _echo_json(run) if as_json else _console().print(iozone_table(run, name, workload))


@bench.command("iperf", short_help="iperf3 from every client to every server at once; a table or --json.")
@cluster_option
@click.option("--seconds", "-t", type=click.IntRange(1, 3600), default=5, show_default=True,
              help="Length of each measurement.")
@click.option("--streams", "-P", type=click.IntRange(1, 128), default=1, show_default=True,
              help="Parallel TCP streams per pair.")
@click.option("--direction", "directions", type=click.Choice(["write", "read"]), multiple=True,
              default=("write", "read"), show_default=True,
              help="write: client to server; read: server to client (repeatable).")
@click.option("--port", type=click.IntRange(1024, 65000), default=5201, show_default=True,
              help="First port; the servers listen on port + client index.")
@json_option
def bench_iperf(cluster: Path, seconds: int, streams: int, directions: tuple[str, ...], port: int,
                as_json: bool) -> None:
    """Runs all client-server pairs of a direction concurrently, as Gluster's client talks to every brick
    server; exit 1 if any pair failed (the others are still shown).

    Example: glmodel bench iperf --cluster glmodel-lab/lab.yaml --seconds 10
    """
    from . import api
    from .present.bench import iperf_table
    from .present.console import spinner

    with spinner(not as_json) as progress:
        matrix = api.bench_iperf(cluster, seconds=seconds, streams=streams, directions=directions,  # type: ignore[arg-type]
                                 port=port, progress=progress)
    _echo_json(matrix) if as_json else _console().print(iperf_table(matrix))
    failed = [p for p in matrix.pairs if p.error]
    if failed:
        raise Failure(f"{len(failed)} of {len(matrix.pairs)} pair(s) failed; first: {failed[0].error}")


@bench.command("disk", short_help="fio O_DIRECT baseline on every brick path; a table or --json.")
@cluster_option
@click.option("--size", default="256MB", show_default=True, help="File size per brick.")
@click.option("--runtime", type=click.IntRange(1, 3600), default=10, show_default=True,
              help="Upper bound in seconds for each test.")
@click.option("--test", "tests", type=click.Choice(["seq_write", "seq_read", "rand_read", "rand_write"]),
              multiple=True, default=("seq_write", "seq_read", "rand_read", "rand_write"), show_default=True,
              help="Tests to run (repeatable).")
@click.option("--parallel", type=click.Choice(["auto", "yes", "no"]), default="auto", show_default=True,
              help="Hosts at once: auto where that cannot lower a figure (hosts on machines of their own; on a "
              "shared machine, bricks whose device has a limit, measured again alone when short of it); yes: "
              "every host, checked the same way; no: one host after another.")
@json_option
def bench_disk(cluster: Path, size: str, runtime: int, tests: tuple[str, ...], parallel: str, as_json: bool) -> None:
    """Sequential and random read/write with O_DIRECT on the filesystem under each brick path (buffered with
    fsync where the filesystem refuses O_DIRECT, which the output says); exit 1 if any brick failed.

    Example: glmodel bench disk --cluster glmodel-lab/lab.yaml --size 64MB
    """
    from . import api
    from .present.bench import disk_table
    from .present.console import spinner

    with spinner(not as_json) as progress:
        at_once: bool | Literal["auto"] = "auto" if parallel == "auto" else parallel == "yes"
        bricks = api.bench_disk(cluster, size=size, runtime=runtime, tests=tests, parallel=at_once,
                                progress=progress)
    _echo_json([b.to_json() for b in bricks]) if as_json else _console().print(disk_table(bricks))
    failed = [b for b in bricks if b.error]
    if failed:
        raise Failure(f"{len(failed)} of {len(bricks)} brick(s) failed; first: {failed[0].error}")


# -- collect / runs / export -----------------------------------------------------------------------------------

store_option = click.option("--store", "store", default="glmodel.db", show_default=True,
                            help="Results store: a SQLite file path or a database URL (postgresql+psycopg://...).")


@cli.command(short_help="Run an experiment plan as a campaign into the results store (resumable).")
@cluster_option
@click.option("--plan", "-p", "plan_file", type=click.Path(path_type=Path), required=True,
              help="Experiment plan (YAML): factors and levels, design, trial protocol.")
@click.option("--variant", default=None, help="A scale the plan defines under `variants` (e.g. quick, for the lab); "
              "its campaign is PLAN-NAME.VARIANT@CLUSTER-NAME.")
@store_option
@click.option("--campaign", default=None, help="Campaign name (default: PLAN-NAME@CLUSTER-NAME).")
@click.option("--dry-run", is_flag=True, help="Print volumes, runs, trials and an estimated duration; run nothing.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first failed run instead of recording it and going on.")
@yes_option
def collect(cluster: Path, plan_file: Path, variant: str | None, store: str, campaign: str | None, dry_run: bool,
            fail_fast: bool, yes: bool) -> None:
    """Runs every run of the plan not yet done in the store (failed and interrupted ones again); Ctrl-C stops
    after recording the current trial's state (exit 130). Network and disk baselines are measured first unless
    the store has them for the same hardware.

    Example: glmodel collect --cluster glmodel-lab/lab.yaml --plan experiments/plans/smoke.yaml
    Example: glmodel collect --cluster glmodel-lab/lab.yaml --plan experiments/read_cost.yaml --variant quick
    """
    import signal

    from . import api
    from .present.campaign import preview_lines
    from .present.console import PlanConsole

    console = _console()
    if dry_run:
        preview = api.collect_preview(cluster, plan_file, variant=variant, store=store, campaign=campaign)
        for line in preview_lines(preview):
            console.print(line, highlight=False, markup=False)
        return
    agree_to_changes(cluster, plan_file, variant, yes, lambda: api.collect_preview(
        cluster, plan_file, variant=variant, store=store, campaign=campaign))
    # SIGTERM ends a campaign like Ctrl-C: the current run is marked interrupted, nothing committed is lost.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    summaries = api.collect(cluster, plan_file, variant=variant, store=store, campaign=campaign, fail_fast=fail_fast,
                            reporter=PlanConsole(console))
    failed = sum(s.failed for s in summaries)
    if failed:
        raise Failure(f"{failed} run(s) failed; `glmodel runs list --status failed` shows them; "
                      "run collect again to retry them")


@cli.group(short_help="List and inspect the runs in a results store.")
def runs() -> None:
    """Runs of every campaign in a store, with status, features and errors."""


@runs.command("list", short_help="One line per run: status, trials, features, error host.")
@store_option
@click.option("--campaign", default=None, help="Only this campaign.")
@click.option("--status", type=click.Choice(["pending", "running", "done", "failed"]), default=None)
@json_option
def runs_list(store: str, campaign: str | None, status: str | None, as_json: bool) -> None:
    """Example: glmodel runs list --status failed"""
    from . import api
    from .present.runs import runs_table

    found = api.runs_list(store, campaign, status)
    _echo_json(found) if as_json else _console().print(runs_table(found, f"runs in {store}"))


@runs.command("design", short_help="An adaptive campaign's decisions: each round's figures and why each run.")
@store_option
@click.option("--campaign", required=True, help="The adaptive campaign.")
@json_option
def runs_design(store: str, campaign: str, as_json: bool) -> None:
    """Round by round: runs measured, how much the model's predictions moved, its importance ranking, and each
    run it chose next with the reason; the last round says why the campaign stopped.

    Example: glmodel runs design --campaign adaptive_smoke@lab
    """
    from . import api
    from .present.runs import design_lines

    log = api.runs_design(store, campaign)
    _echo_json(log) if as_json else click.echo("\n".join(design_lines(log)))


@runs.command("show", short_help="One run: config, every trial with its figures, the raw output of one trial.")
@click.argument("run_id", type=int)
@store_option
@click.option("--raw", "raw_trial", type=int, default=None, help="Also print the raw iozone output of this trial.")
def runs_show(run_id: int, store: str, raw_trial: int | None) -> None:
    """Example: glmodel runs show 3 --raw 1"""
    from . import api
    from .present.runs import run_lines

    click.echo("\n".join(run_lines(api.runs_show(store, run_id, raw_trial))))


@cli.command(short_help="Did a change make the cluster slower? A campaign against another, side by side, with a verdict.")
@store_option
@click.option("--campaign", default=None, help="The campaign after the change (default: the store's latest).")
@click.option("--against", required=True, help="Before the change: a campaign of the store, last (the plan's "
              "previous campaign on this cluster), last:N (the N before it, pooled), another store (path or URL), "
              "or sides (an interleaved plan's side A against its side B).")
@click.option("--against-campaign", default=None, help="With --against STORE: its campaign (default: its latest).")
@click.option("--margin", type=click.FloatRange(0.1, 50), default=5.0, show_default=True,
              help="Percent: a change within ±this is \"the same\" when the trials show it; slower beyond it fails.")
@click.option("--level", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True,
              help="Confidence of the intervals and family-wise level of the verdicts (Holm over every row).")
@click.option("--markdown", "md_out", type=click.Path(path_type=Path), help="Also write a Markdown table (for a "
              "pull-request comment).")
@click.option("--figure", type=click.Path(path_type=Path), help="Also draw the ratios with intervals (PNG).")
@json_option
def compare(store: str, campaign: str | None, against: str, against_campaign: str | None, margin: float,
            level: float, md_out: Path | None, figure: Path | None, as_json: bool) -> None:
    """Match two campaigns' trials by configuration and metric, and judge each row: slower or faster beyond the
    margin, the same within it (an equivalence test), or undecided. Exit 0 when no row is slower, 1 when one is
    (those rows first), 2 on input that cannot be compared.

    \b
    Example: glmodel compare --store glmodel.db --against last
             glmodel compare --store after.db --against before.db --markdown compare.md
    """
    from . import api
    from .present import compare as show

    checked_outputs((md_out, "--markdown", (".md",)), (figure, "--figure", (".png",)))  # before the work
    result = api.compare(store, against, campaign=campaign, against_campaign=against_campaign, margin=margin / 100,
                         level=level)
    show.write(result, md_out, figure)
    _echo_json(result) if as_json else show.render(_console(), result)
    if result.exit_status:
        raise Failure(result.failure_line(), result.exit_status)


@cli.command(short_help="Bring a store to this glmodel's schema (older stores are read as they are without it).")
@store_option
def migrate(store: str) -> None:
    """Apply the schema steps a store written by an earlier glmodel lacks (compare wants both stores at one).

    Example: glmodel migrate --store old.db
    """
    from . import api

    click.echo("{}: schema version {} -> {}".format(store, *api.migrate(store)))


@cli.command(short_help="Write the store's trials as one tidy table (CSV or Parquet), the table models read.")
@click.option("--store", "stores", multiple=True, default=["glmodel.db"], show_default=True,
              help="Results store (a SQLite file or a database URL); repeat it to pool several stores in one "
              "table, each row naming its store and cluster.")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True, help="Output file.")
@click.option("--campaign", default=None, help="Only this campaign.")
@click.option("--all-trials", is_flag=True, help="Include warm-ups, outliers and failed runs (flag columns say which).")
def export(stores: tuple[str, ...], fmt: str, out: Path, campaign: str | None, all_trials: bool) -> None:
    """One row per trial: campaign, run, features (typed), trial flags, metrics (MB/s; small-file rates in files/s).

    Example: glmodel export --format parquet --out trials.parquet
    """
    from . import api

    frame = api.export(list(stores), out, fmt, campaign, all_trials)
    click.echo(f"wrote {len(frame)} trial(s), {len(frame.columns)} column(s) to {out}")


@cli.command(short_help="Write the HTML + Markdown report: the decision first, then models, campaigns, studies.")
@store_option
@model_file_option(required=False, help="A model file from `glmodel fit`: its coefficient, validation and "
                   "importance tables and figures.")
@click.option("--scenarios", type=click.Path(path_type=Path), default=None,
              help="A what-if file (as for predict): the report opens with its answer, ranked candidates, "
              "verification found in the store, and the data's limits. Needs --model.")
@campaigns_option
@click.option("--out", type=click.Path(path_type=Path), default=Path("report"), show_default=True,
              help="Directory for index.html, report.md and the figures (PNG).")
def report(store: str, model_file: Path | None, scenarios: Path | None, campaigns: tuple[str, ...],
           out: Path) -> None:
    """With --model and --scenarios, a decision document: the question, the best buy with its expected change
    and interval, whether it is inside the data and verified, the ranked candidates, verification and the data's
    limits; then, for engineers, the models, each campaign with its hosts and baselines, and each methodology
    study's tables and figures. The page opens without a network connection.

    \b
    Example: glmodel report --store glmodel.db --model results/emulated-model.json \\
             --scenarios experiments/whatif/emulated_decision.yaml --out results/report
    """
    from .present.report import write

    with working("writing the report"):
        written = write(store, out, model_file, campaigns, scenarios)
    click.echo(f"report: {written.html} ({len(written.sections)} section(s), {len(written.images)} figure(s)); "
               f"summary: {written.markdown}")


data_option = click.option(
    "--data", "data", type=click.Path(path_type=Path, exists=True, dir_okay=False), default=None,
    help="A table written by `glmodel export` (CSV or Parquet, e.g. data/hardware_family.csv) instead of a store.")


@cli.command(short_help="Fit the study's MLR and its challengers per metric; validate, rank predictors, save.")
@store_option
@data_option
@campaigns_option
@click.option("--family", type=click.Choice(["hardware", "gluster", "unified"]), default="unified", show_default=True,
              help="Feature family: the study's hardware or Gluster model, or everything.")
@click.option("--metric", "metrics", multiple=True, help="Metric(s) to fit (default: every one with data).")
@click.option("--model", "models", multiple=True, help="Challenger(s): loglinear, physical, bottleneck, gbm (default: all; "
              "the MLR is always fitted).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the splits, samples and bootstrap.")
@click.option("--level", type=click.FloatRange(0.5, 0.99), default=0.9, show_default=True,
              help="Prediction-interval level checked on held-out data.")
@click.option("--samples", type=click.IntRange(64, 1 << 20), default=1024, show_default=True,
              help="Base samples for the Sobol' indices.")
@click.option("--bootstrap", type=click.IntRange(0, 1000), default=30, show_default=True,
              help="Refits for the bootstrap intervals of importance (0: none).")
@click.option("--with-outliers", is_flag=True, help="Keep trials flagged as outliers (warm-ups never count).")
@click.option("--where", "where", multiple=True, metavar="NAME=VALUE",
              help="Only the rows where a column holds a value (repeatable), e.g. --where regime=uncached.")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=Path("model.json"), show_default=True,
              help="Model file to write.")
@json_option
def fit(store: str, data: Path | None, campaigns: tuple[str, ...], family: str, metrics: tuple[str, ...],
        models: tuple[str, ...],
        seed: int, level: float, samples: int, bootstrap: int, with_outliers: bool, where: tuple[str, ...],
        out: Path, as_json: bool) -> None:
    """Per metric: the study's MLR (coefficients, adjusted R², 75/25 validation), grouped cross-validation,
    diagnostics, challengers side by side, importance (Sobol'), and a model file for `glmodel predict`.

    Example: glmodel fit --store glmodel.db --family hardware --out model.json
    """
    from . import api
    from .present.model import print_fits

    with working("fitting the models, validating them and ranking the inputs"):
        done = api.fit(out, store=store, data=data, campaigns=campaigns, with_outliers=with_outliers, where=where,
                       family=family, metrics=metrics, models=models, seed=seed, level=level, samples=samples,
                       bootstrap=bootstrap)
    if as_json:
        return _echo_json(done)
    console = _console()
    print_fits(console, done.fits, done.skipped)
    console.print(f"model file: {out} ({', '.join(f.metric + ': ' + f.selected for f in done.fits)})",
                  highlight=False)


@cli.command("design-size", short_help="How many runs a design needs: subsample a full grid, refit, compare.")
@store_option
@data_option
@campaigns_option
@click.option("--family", type=click.Choice(["hardware", "gluster", "unified"]), default="hardware",
              show_default=True, help="Feature family of the MLR.")
@click.option("--metric", "metrics", multiple=True, help="Metric(s) (default: every one with data).")
@click.option("--sizes", type=Parsed("N,N,...", parse_ints), help="Numbers of configurations to try, e.g. 12,16,24,32 (default: from just enough to "
              "fit the MLR up to three quarters of the grid).")
@click.option("--subsets", type=click.IntRange(5, 10000), default=50, show_default=True,
              help="Designs drawn per size and strategy (seeds).")
@click.option("--strategy", "strategies", multiple=True,
              type=click.Choice(STRATEGIES),
              help="How designs are chosen (repeatable; default: all, side by side). adaptive reads the grid's "
                   "measurements as an oracle.")
@click.option("--figure", type=click.Path(path_type=Path), help="Also draw held-out R² and top-predictor "
              "recovery against runs, one line per strategy (PNG).")
@click.option("--tolerance", type=click.FloatRange(0.0, 1.0), default=0.05, show_default=True,
              help="Median held-out R² may fall this far below the whole grid's cross-validated R².")
@click.option("--top-share", type=click.FloatRange(0.0, 1.0), default=0.9, show_default=True,
              help="Share of subsets that must rank the whole grid's top predictor first.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the subsets and the CV folds.")
@click.option("--csv", "csv_out", type=click.Path(path_type=Path), help="Also write the curve (one row per metric "
              "and size) to this CSV file.")
@json_option
def design_size(store: str, data: Path | None, campaigns: tuple[str, ...], family: str, metrics: tuple[str, ...],
                sizes: str | None, subsets: int, strategies: tuple[str, ...], figure: Path | None, tolerance: float,
                top_share: float, seed: int, csv_out: Path | None, as_json: bool) -> None:
    """Draw random subsets of a full grid's configurations at each size, fit the study's MLR on each, and judge
    it on the configurations left out (R²) and by its importance ranking against the whole grid's. Prints the
    curve and the smallest size that meets the criterion.

    Example: glmodel design-size --data data/hardware_grid.csv
    """
    from . import api
    from .present.model import design_figure, print_design_size

    results, where = api.design_size(
        store=store, data=data, campaigns=campaigns, metrics=metrics, csv_out=csv_out, figure=figure, family=family,
        strategies=strategies or STRATEGIES, sizes=sizes,
        subsets=subsets, seed=seed, tolerance=tolerance, top_share=top_share)
    if figure is not None:
        design_figure(results, figure)
    if as_json:
        return _echo_json({"data": where, "results": [r.to_json() for r in results]})
    print_design_size(_console(), results, where)


@cli.command(short_help="What-if: predicted MB/s with intervals for candidate hardware/configurations.")
@model_file_option()
@click.option("--scenarios", type=click.Path(path_type=Path), help="YAML file: a baseline and named candidates.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="A candidate on top of the baseline (repeatable), e.g. --set network_gbps=10 --set replica=2.")
@click.option("--metric", "metrics", multiple=True, help="Metric(s) to predict (default: every one in the model).")
@click.option("--level", type=click.FloatRange(0.5, 0.99), default=None,
              help="Prediction-interval level (default: the file's, else 0.9).")
@click.option("--use", help="Predict with this model of the file (mlr, loglinear, physical, bottleneck, gbm) instead of each "
              "metric's selected one.")
@json_option
@click.option("--csv", "csv_out", type=click.Path(path_type=Path), help="Also write one row per scenario and metric "
              "to this CSV file ('-': standard output, instead of tables).")
@click.option("--figure", type=click.Path(path_type=Path), help="Also draw a bar chart with intervals (PNG/SVG/PDF).")
@click.option("--details", is_flag=True, help="Every table: ceilings, measured means, flags, why a candidate is not "
              "ranked, capacity and levers (default: the answer and one compact table per metric).")
def predict(model_file: Path, scenarios: Path | None, sets: tuple[str, ...], metrics: tuple[str, ...],
            level: float | None, use: str | None, as_json: bool, csv_out: Path | None, figure: Path | None,
            details: bool) -> None:
    """Answer a what-if question: the best buy per metric first (its gain with the interval of the change, and
    whether it rests on measured data), what limits the baseline, then per metric MB/s with a prediction
    interval, the change against the baseline, interpolated or extrapolated, and a ranking by MB/s gained per
    price. A candidate is ranked only when it gains measurably, inside the data and below what its hardware
    can carry.

    \b
    Example: glmodel predict --model model.json --set servers=4 --set replica=2
             glmodel predict --model model.json --scenarios experiments/whatif/study_decision.yaml
    """
    from . import api
    from .present import predict as show

    to_stdout = str(csv_out) == "-"
    files = show.Files(None if to_stdout else csv_out, figure)  # checked before the work: a bad path loses nothing
    with working("predicting"):
        answer = api.predict(model_file, scenarios=scenarios, sets=sets, metrics=metrics, level=level, use=use)
    files.write(answer)
    if to_stdout:
        return click.echo(show.to_csv(answer), nl=False)
    if as_json:
        return _echo_json(answer)
    show.print_answer(_console(), answer, details=details)
    if csv_out or figure:
        click.echo(f"wrote {', '.join(str(p) for p in (csv_out, figure) if p is not None)}")


@cli.command(short_help="Which Gluster volume options to set for a workload, and what they gain over the defaults.")
@model_file_option(help="Model file written by `glmodel fit` on data that varied volume options (--family gluster).")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="The workload (repeatable), e.g. --set record_size=4KB --set sync=none; the rest is the data's "
              "reference configuration. An option given here is fixed, not tuned.")
@click.option("--metric", "metrics", multiple=True, help="Metric(s) to tune for (default: every one in the model); "
              "with several, also one option set that balances them.")
@click.option("--level", type=click.FloatRange(0.5, 0.99), default=0.9, show_default=True,
              help="Interval level; an option matters when its change is clear of zero at it (Bonferroni-corrected).")
@click.option("--use", help="Advise with this model of the file instead of each metric's selected one.")
@click.option("--volume", default="VOLNAME", show_default=True, help="Volume name in the printed commands.")
@click.option("--scenarios-out", type=click.Path(path_type=Path), default=None,
              help="Also write the advice as a what-if file (defaults vs each recommendation) for `glmodel verify`.")
@json_option
def tune(model_file: Path, sets: tuple[str, ...], metrics: tuple[str, ...], level: float, use: str | None,
         volume: str, scenarios_out: Path | None, as_json: bool) -> None:
    """Search the volume options the model was fitted on (translators, io-cache size) for the workload: per metric
    the recommended set against Gluster's defaults with the gain and its interval, the options that do not matter
    (left at the default), whether the workload is inside the data, and the `gluster volume set` commands.

    Example: glmodel tune --model gluster-model.json --set record_size=4KB --metric write --metric read
    """
    from . import api

    with working("searching the volume options (the trees' change intervals take a few seconds)"):
        advice = api.tune(model_file, sets=sets, metrics=metrics, level=level, use=use, volume=volume,
                          scenarios_out=scenarios_out)
    from .present.tune import print_advice

    _echo_json(advice) if as_json else print_advice(_console(), advice)
    if scenarios_out is not None and not as_json:
        click.echo(f"wrote {scenarios_out} (measure it: glmodel verify --scenarios {scenarios_out} ...)")


@cli.command(short_help="Measure what-if scenarios on a cluster and check the model's predictions against them.")
@cluster_option
@model_file_option()
@click.option("--scenarios", type=click.Path(path_type=Path), required=True,
              help="What-if file (as for predict): its baseline and candidates are built and measured.")
@click.option("--plan", "-p", "plan_file", type=click.Path(path_type=Path), required=True,
              help="The plan the model's training data were collected with: its protocol, baselines and fixed "
              "factors are used again.")
@click.option("--variant", default=None, help="The plan's variant, if the training data used one.")
@store_option
@click.option("--metric", "metrics", multiple=True, help="Metric(s) to check (default: every one the plan measures).")
@click.option("--level", type=click.FloatRange(0.5, 0.99), default=None,
              help="Prediction-interval level (default: the file's, else 0.9).")
@click.option("--fail-fast", is_flag=True, help="Stop at the first failed run.")
@click.option("--dry-run", is_flag=True, help="Print each scenario's run and campaign; build and measure nothing.")
@yes_option
@json_option
def verify(cluster: Path, model_file: Path, scenarios: Path, plan_file: Path, variant: str | None, store: str,
           metrics: tuple[str, ...], level: float | None, fail_fast: bool, dry_run: bool, yes: bool,
           as_json: bool) -> None:
    """Bring each scenario's configuration up on the cluster (on a glmodel lab with its hardware), measure it
    with the training plan's protocol as campaigns of their own (never pooled into training data; resumable),
    and print predicted vs measured: error %, whether each measurement fell inside its interval, MAPE and
    coverage per metric, and whether the best candidate per price measured best.

    \b
    Example: glmodel verify --cluster glmodel-lab/lab.yaml --model results/emulated-model.json \\
             --scenarios experiments/whatif/emulated_decision.yaml --plan experiments/plans/hardware_emulated.yaml
    """
    import signal

    from . import api
    from .present import verify as show
    from .present.console import PlanConsole

    console = _console()
    if not dry_run:
        agree_to_changes(cluster, plan_file, variant, yes, lambda: api.verify(
            cluster, model_file, scenarios, plan_file, variant=variant, store=store, metrics=metrics, level=level,
            dry_run=True), machine_output=as_json)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    result = api.verify(cluster, model_file, scenarios, plan_file, variant=variant, store=store, metrics=metrics,
                        level=level, fail_fast=fail_fast, dry_run=dry_run,
                        reporter=None if as_json else PlanConsole(console))
    if api.is_verify_preview(result):
        return click.echo("\n".join(show.verify_plan_lines(result, str(model_file))))
    _echo_json(result) if as_json else show.print_verification(console, result)
    if result.exit_status:  # documented: 1 when a recommended buy did not measure best
        raise Failure(result.failure_line())


# -- lab -----------------------------------------------------------------------------------------------------

@cli.group(short_help="Local N-node GlusterFS lab, each node a network namespace (up, status, down).")
def lab() -> None:
    """A real GlusterFS cluster on one machine: node i is glusterd + sshd in a network namespace at 10.213.1.i
    (host i of the lab's subnet)."""


lab_dir_option = click.option("--dir", "lab_dir", type=click.Path(path_type=Path), default=DEFAULT_LAB_DIR,
                              show_default=True, help="Directory holding the lab's state and lab.yaml.")


def hardware_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The per-node hardware options shared by `lab up` and `lab node` (see gluster_model.lab.hardware)."""
    for knob in reversed(HARDWARE_KNOBS):
        f = click.option("--" + knob.name.replace("_", "-"), knob.name, type=_setting(knob.name), help=knob.help)(f)
    return f


@lab.command("up", short_help="Start N nodes and write DIR/lab.yaml.")
@click.option("--nodes", "-n", type=click.IntRange(1, 16), default=3, show_default=True, help="Number of nodes.")
@lab_dir_option
@click.option("--ssh-port", type=click.IntRange(1, 65535), default=2222, show_default=True,
              help="Port each node's sshd listens on (at its own address).")
@click.option("--client-nodes", type=click.IntRange(0, 15), default=0, show_default=True,
              help="How many nodes (the last ones) are clients only; the others are then servers only. 0: every "
                   "node is both (hyperconverged: a client reads and writes its own brick without its NIC).")
@hardware_options
@click.option("--brick-size", type=SIZE, default="4GB", show_default=True, help="Size of each node's loop image or tmpfs.")
@click.option("--subnet", help="The lab's private IPv4 /24, node i its host i; a second lab on the machine needs "
                                "another. [default: the earlier lab's in DIR, else 10.213.1.0/24]")
def lab_up(nodes: int, lab_dir: Path, ssh_port: int, client_nodes: int, brick_size: int, subnet: str | None,
           **hardware: KnobValues | None) -> None:
    """Bring up a local lab; every node gets the hardware given. Clears what an earlier lab left in the same
    directory.

    Example: glmodel lab up --nodes 3 --dir /var/tmp/lab
    Example: glmodel lab up --dir /var/tmp/lab --link 1gbit --disk 150MB/s --ram 2GB --cpu 0.5
    Example: glmodel lab up --nodes 8 --client-nodes 4   (4 servers, 4 clients apart from them)
    Example: glmodel lab up --dir /var/tmp/lab2 --subnet 10.213.2.0/24   (beside a lab on the default subnet)
    """
    import time

    from . import api

    started = time.monotonic()
    state = api.lab_up(lab_dir, nodes=nodes, ssh_port=ssh_port, progress=lambda m: click.echo(f"lab: {m}", err=True),
                       hardware=_merged(hardware), brick_size=brick_size, client_nodes=client_nodes, subnet=subnet)
    click.echo(f"lab up in {time.monotonic() - started:.1f}s; cluster file: {state.cluster_file}")


def _merged(settings: dict[str, KnobValues | None]) -> KnobValues:
    """The hardware options given, parsed, as one mapping of node settings."""
    return {k: v for parsed in settings.values() if parsed for k, v in parsed.items()}


def _set_nodes(lab_dir: Path, nodes: tuple[str, ...], settings: KnobValues, size: int | None,
               columns: tuple[str, ...] | None = None) -> None:
    from . import api
    from .present.lab import node_lines

    shown = api.lab_node(lab_dir, nodes, settings, brick_size=size, progress=lambda m: click.echo(f"lab: {m}", err=True))
    click.echo("\n".join(node_lines(shown, columns)))


node_option = click.option("--node", "nodes", multiple=True,
                           help="Node address, index or nodeN (repeatable; default: every node).")


@lab.command("node", short_help="Set nodes' hardware (link, bricks, disk, RAM, CPU, latency), or show it.")
@lab_dir_option
@node_option
@hardware_options
@click.option("--size", type=SIZE, help="Size of the loop image or tmpfs of a new backing (default: the lab's).")
def lab_node(lab_dir: Path, nodes: tuple[str, ...], size: int | None, **hardware: KnobValues | None) -> None:
    """Change the hardware of lab nodes; what is not given stays. Without settings: show every node's.
    A new backing is refused while a volume has bricks there.

    Example: glmodel lab node --node 2 --disk-read 120MB/s --disk-write 60MB/s --ram 1GB --cpu 0.25
    """
    settings = _merged(hardware)
    if size is not None and "backing" not in settings and not any(k.startswith("disk") for k in settings):
        raise click.BadParameter("give --backing (or a disk limit) with --size", param_hint="--size")
    _set_nodes(lab_dir, nodes, settings, size)  # every setting a node has


def _one_setting(name: str, kind: str, columns: tuple[str, ...], help_text: str, example: str) -> None:
    """`lab link` and `lab brick`: `lab node` with one setting, kept for scripts; without it, show that column."""

    @lab.command(name, short_help=f"Set nodes' {columns[0]} (same as `lab node --{kind}`), or show it.",
                 help=f"{help_text}\n\nExample: {example}")
    @lab_dir_option
    @node_option
    @click.option(f"--{'rate' if kind == 'link' else kind}", "setting", type=_setting(kind),
                  help=f"The node's {kind}, as for `lab node --{kind}`. Without it: show the current one.")
    @click.option("--size", type=SIZE, hidden=kind == "link", help="Size of the loop image or tmpfs.")
    def command(lab_dir: Path, nodes: tuple[str, ...], setting: KnobValues | None, size: int | None) -> None:
        if setting is None and size is not None:
            raise click.BadParameter(f"give --{kind} with --size", param_hint="--size")
        _set_nodes(lab_dir, nodes, setting or {}, size, columns)


_one_setting("link", "link", ("link",), "Shape the links of lab nodes: a node's sends and receives are each "
             "limited to RATE (100mbit, 1gbit, ... or unlimited), shared by all its peers, as a NIC's are.",
             "glmodel lab link --node 10.213.1.2 --rate 10gbit")
_one_setting("brick", "backing", ("bricks",), "Back the bricks of lab nodes with a filesystem of their own (dir, "
             "ext4, xfs or tmpfs). Refused while a volume has bricks there.",
             "glmodel lab brick --node 2 --backing xfs")


@lab.command("down", short_help="Unmount, stop volumes, end the lab's processes, remove its state.")
@lab_dir_option
def lab_down(lab_dir: Path) -> None:
    """Tear the lab down. Only what the lab created is touched; safe to run twice.

    Example: glmodel lab down --dir /var/tmp/lab
    """
    from . import api

    api.lab_down(lab_dir, progress=lambda m: click.echo(f"lab: {m}", err=True))


@lab.command("status", short_help="Show each node's glusterd, sshd and peer connections.")
@lab_dir_option
def lab_status(lab_dir: Path) -> None:
    """Exit 1 if any node is down.

    Example: glmodel lab status --dir /var/tmp/lab
    """
    from . import api
    from .present.lab import status_table

    state, nodes = api.lab_status(lab_dir)
    _console().print(status_table(state, nodes))
    if not all(n.glusterd and n.sshd and n.peers_connected == n.peers_total for n in nodes):
        raise Failure("lab is degraded; `glmodel lab up` again restarts it from scratch")


def main() -> NoReturn:
    """Run the CLI (``present.cli_kit.run``: a usage error is one line naming the command and the option)."""
    run(cli)


if __name__ == "__main__":  # pragma: no cover
    main()
