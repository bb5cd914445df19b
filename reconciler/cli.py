"""The `reconcile` command: parse the options, call the use case (`reconciler.app`), render its
outcome, write it, and turn the outcome's kind into the exit code through one table, EXIT_CODES.

Errors are one paragraph on stderr, never a traceback (set RECONCILER_DEBUG=1 to see one).
"""

from __future__ import annotations

import functools
import gc
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from reconciler.app.outcome import Outcome
from reconciler.errors import ReconcilerError
from reconciler.models.formats import DRIFT_FORMATS, PLAN_FORMATS

if TYPE_CHECKING:
    from reconciler.adopt.importer import GroupBy
    from reconciler.app.cluster_access import Connect, LiveCluster
    from reconciler.models.desired import ClusterSpec
    from reconciler.models.plan import Plan

# 2 is "changes" for `plan`, so a usage error exits 1 like any other error (see _ReconcileGroup).
EXIT_CODES = {Outcome.DONE: 0, Outcome.FAILED: 1, Outcome.CHANGES: 2, Outcome.DRIFT: 3}
FORMATS = click.Choice(PLAN_FORMATS)


def handle_errors(command: Callable[..., Outcome]) -> Callable[..., Outcome]:
    """Turn the reconciler's errors (and anything unexpected) into one paragraph on stderr and a failed outcome."""

    @functools.wraps(command)
    def wrapper(*args: object, **kwargs: object) -> Outcome:
        try:
            return command(*args, **kwargs)
        except (click.ClickException, click.Abort):
            raise  # click's own (a refused confirmation): reported by _ReconcileGroup
        except ReconcilerError as e:
            message = str(e)
        except KeyboardInterrupt:
            message = "interrupted; nothing further was done."
        except OSError as e:
            if os.environ.get("RECONCILER_DEBUG"):
                raise
            if e.filename is None:
                message = f"the operating system refused: {e.strerror or e}. Check the disk, the paths and their permissions."
            else:
                message = f"cannot use {e.filename}: {e.strerror}. Check the path and its permissions."
        except Exception as e:  # a bug: still no traceback for the user unless asked
            if os.environ.get("RECONCILER_DEBUG"):
                raise
            message = (
                f"internal error ({type(e).__name__}: {e}). This is a bug in the reconciler; "
                "run again with RECONCILER_DEBUG=1 for a traceback and report it."
            )
        click.echo(f"Error: {message}", err=True)
        return Outcome.FAILED

    return wrapper


def use_color(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _output_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Checked before anything is read or changed: an apply must not finish with nowhere to report."""
    problem = _output_problem(value)
    if problem:
        raise click.BadParameter(problem)
    return value


def _output_problem(value: str | None) -> str | None:
    if value is not None:
        path = Path(value)
        if path.is_dir():
            return f"{value} is a directory; give a file name."
        if not path.parent.is_dir():
            return f"directory {path.parent} does not exist; create it first."
    return None


def _byte_rate(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    """A size per second (50MiB, 10000000): a throttle of 0 would stop replication."""
    from reconciler.units import parse_bytes

    rate = _parsed(value, parse_bytes)
    if rate is not None and rate < 1:
        raise click.BadParameter("0 would stop replication; leave the option out for no throttle.")
    return rate


def _duration_s(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    from reconciler.units import parse_duration_ms

    ms = _parsed(value, parse_duration_ms)
    if ms is not None and ms < 0:
        raise click.BadParameter("a wait cannot be negative; 0 submits and does not wait.")
    return None if ms is None else ms / 1000


def _idle_ms(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    from reconciler.units import parse_duration_ms

    ms = _parsed(value, parse_duration_ms)
    if ms is not None and ms < 1:
        raise click.BadParameter("a topic idle for 0 ms is any topic; give a duration such as 30d.")
    return ms


def _parsed(value: str | None, parse: Callable[[str], int]) -> int | None:
    if value is None:
        return None
    try:
        return parse(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def _regexes(ctx: click.Context, param: click.Parameter, value: str | tuple[str, ...] | None) -> str | tuple[str, ...] | None:
    """REGEX options (Python's re): checked before anything is read, so a typo is not found after connecting."""
    for pattern in (value,) if isinstance(value, str) else value or ():
        try:
            re.compile(pattern)
        except re.error as e:
            raise click.BadParameter(f"{pattern!r} is not a valid regular expression: {e}.") from None
    return value


def _spark_settings(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    """KEY=VALUE settings as spark-submit's --conf takes them; a key given twice is refused."""
    settings: dict[str, str] = {}
    for value in values:
        key, sep, setting = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{value!r} is not KEY=VALUE (e.g. spark.executor.memory=4g).")
        if key.strip() in settings:
            raise click.BadParameter(f"{key.strip()} is given twice; give each setting once.")
        settings[key.strip()] = setting
    return settings


def _server_list(ctx: click.Context, param: click.Parameter, value: str | None) -> list[str] | None:
    """host:port,... as a list; each is checked when connecting, where an empty one is refused."""
    return [s.strip() for s in value.split(",")] if value else None


COLOR_OPTION = click.option(
    "--color/--no-color", default=None, help="Colour text on stdout (default: on a terminal, unless NO_COLOR is set)."
)


def _show(render: Callable[[str, bool], str], fmt: str, output: str | None, painted: bool) -> None:
    """The report in `fmt` on stdout; with -o, in `fmt` to FILE and as text on stdout, shown first so
    that what happened is seen whatever happens to the file. Colour only on text to stdout (click
    strips ANSI codes off a non-terminal unless told otherwise, so the choice is passed on too)."""
    if output:
        click.echo(render("text", painted), nl=False, color=painted)
        _emit(render(fmt, False), output)
    else:
        painted = painted and fmt == "text"
        click.echo(render(fmt, painted), nl=False, color=painted)


def _emit(text: str, output: str | None) -> None:
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as e:
            raise ReconcilerError(f"could not write {output}: {e.strerror or e}. Check the disk and the path.") from e
    else:
        click.echo(text, nl=False)


def _progress(message: str) -> None:
    click.echo(message, err=True)


def _connector(bootstrap_servers: list[str] | None) -> Connect:
    """Connections through the Kafka adapter, whose modules are imported when one is opened (a
    plan against a snapshot opens none)."""

    def connect(spec: ClusterSpec) -> AbstractContextManager[LiveCluster]:
        from reconciler.app.cluster_access import kafka_connector

        return kafka_connector(bootstrap_servers, progress=_progress)(spec)

    return connect


@contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """One command builds one large graph of objects (a read of every partition, a plan) and drops
    it when it ends. Python's cyclic collector would walk that growing graph again and again while
    it is built, to find almost nothing: on a large cluster that was the largest single cost of a
    plan (docs/performance.md). So the collector is off for the command's
    lifetime, which is bounded; reference counting still frees everything that is not in a cycle,
    and the few cycles a command makes (finished coroutines and futures of the Kafka client) are
    small. The collector is turned back on when the command returns (CliRunner runs many commands
    in one process)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """A cancelled CI job gets SIGTERM (GitHub Actions sends SIGINT, then SIGTERM): both stop a
    command the same way, so an apply stopped after its first write still reports what it wrote
    (reconciler.apply.executor) instead of dying silently. Signal handlers belong to the main
    thread; elsewhere (a test's thread) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _ReconcileGroup(click.Group):
    """click exits 2 on a usage error, which `plan` uses for "changes present": a CI job would take
    a mistyped option for a plan with changes. Every error exits 1 here. Each command returns its
    outcome's kind; this is the one place that exits."""

    def main(self, *args: Any, **kwargs: Any) -> NoReturn:  # click's own signature
        kwargs["standalone_mode"] = False
        with _without_cyclic_gc(), _terminate_as_interrupt():
            try:
                returned = super().main(*args, **kwargs)
            except click.ClickException as e:
                e.show()
                returned = Outcome.FAILED
            except click.Abort:
                click.echo("Aborted; nothing was changed.", err=True)
                returned = Outcome.FAILED
        # --help and --version return click's own exit code (0) instead of an outcome
        sys.exit(EXIT_CODES[returned] if isinstance(returned, Outcome) else returned)


@click.group(cls=_ReconcileGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kafka-reconciler")
def main() -> None:
    """Declarative Kafka topics and truncation points, reviewed in Git."""


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@handle_errors
def validate(manifests_dir: str) -> Outcome:
    """Check the manifests and the policy, offline. Exit 0 if valid, 1 otherwise."""
    from reconciler.app.validate_manifests import validate_manifests

    outcome = validate_manifests(manifests_dir)
    click.echo(f"{outcome.files} files, {outcome.clusters} clusters, {outcome.topics} topics: valid.")
    return outcome.kind


@main.command()
@handle_errors
def schema() -> Outcome:
    """Print the JSON Schema of the manifest format (for editor completion)."""
    from reconciler.app.validate_manifests import manifest_schema

    outcome = manifest_schema()
    click.echo(json.dumps(outcome.schema, indent=2))
    return outcome.kind


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@click.option(
    "--file",
    "codeowners_file",
    default=".github/CODEOWNERS",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="The CODEOWNERS file whose generated section is written (or checked).",
)
@click.option("--root", default=".", show_default=True, help="The repository's top directory: paths are written from it.")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 when the file is out of date (for CI).")
@handle_errors
def codeowners(manifests_dir: str, codeowners_file: str, root: str, check: bool) -> Outcome:
    """Write the CODEOWNERS lines that require each owner's review of the files holding its topics."""
    from reconciler.app.codeowners import codeowners as write_codeowners

    outcome = write_codeowners(manifests_dir, codeowners_file, root, check)
    for mixed in outcome.mixed:
        held = ", ".join(f"{owner} {count}" for owner, count in mixed.owners.items())
        click.echo(
            f"warning: {mixed.path} holds topics of {len(mixed.owners)} owners ({held}): CODEOWNERS lets any one owner "
            "listed approve, so no owner's review is required for the others' topics; split it into one file per owner",
            err=True,
        )
    lines = f"{len(outcome.lines)} line{'s' if len(outcome.lines) != 1 else ''}"
    if check and outcome.changed:
        click.echo(
            f"{outcome.file} is out of date with the manifests' owners ({lines} expected); run `reconcile codeowners "
            f"{manifests_dir}` and commit the file",
            err=True,
        )
    elif check or not outcome.changed:
        click.echo(f"{outcome.file} is up to date ({lines}).")
    else:
        click.echo(f"{outcome.file}: wrote {lines}.")
    return outcome.kind


CLUSTER_OPTION = click.option("--cluster", help="Cluster name from the manifests (default: the snapshot's).")
BOOTSTRAP_OPTION = click.option(
    "--bootstrap-servers",
    envvar="RECONCILE_BOOTSTRAP_SERVERS",
    callback=_server_list,
    help="Override the cluster's bootstrap servers (host:port,...), e.g. from a CI secret.",
)


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@CLUSTER_OPTION
@click.option("--snapshot", type=click.Path(), help="Plan against a saved snapshot instead of a live cluster.")
@BOOTSTRAP_OPTION
@click.option("--offline", is_flag=True, help="Skip validating the plan on the brokers (validate_only).")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    callback=_output_file,
    help="Write the plan in --format to FILE; the text plan goes to stdout.",
)
@COLOR_OPTION
@handle_errors
def plan(
    manifests_dir: str,
    cluster: str | None,
    snapshot: str | None,
    bootstrap_servers: list[str] | None,
    offline: bool,
    fmt: str,
    output: str | None,
    color: bool | None,
) -> Outcome:
    """Show what would change. Exit 0 no changes, 2 changes, 1 error.

    Against a live cluster the plan is also validated on the brokers with validate_only (nothing
    is changed); their refusals appear as errors next to the action they concern.
    """
    from reconciler.app.make_plan import plan_cluster
    from reconciler.render import render_plan

    outcome = plan_cluster(manifests_dir, cluster, snapshot, _connector(bootstrap_servers), validate=not offline)
    _show(lambda f, c: render_plan(outcome.plan, f, color=c), fmt, output, use_color(color))
    return outcome.kind


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@click.option("--cluster", required=True, help="Cluster name from the manifests.")
@BOOTSTRAP_OPTION
@click.option("--sizes/--no-sizes", default=True, show_default=True, help="Read partition sizes (DescribeLogDirs).")
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    required=True,
    help="Snapshot file to write (JSON); with --format parquet, the fleet directory to write into.",
)
@click.option(
    "--format",
    "snapshot_format",
    type=click.Choice(["json", "parquet"]),
    default="json",
    show_default=True,
    help="parquet: write <OUTPUT>/<cluster>/<run>.parquet, the columnar layout `drift --fleet` reads.",
)
@handle_errors
def snapshot(
    manifests_dir: str, cluster: str, bootstrap_servers: list[str] | None, sizes: bool, output: str, snapshot_format: str = "json"
) -> Outcome:
    """Save what the cluster looks like, for offline planning (`plan --snapshot`) and drift reports."""
    from reconciler.app.take_snapshot import take_snapshot

    problem = _output_problem(output) if snapshot_format == "json" else None  # parquet: a directory, made if missing
    if problem:  # before connecting: a read must not end with nowhere to write it
        raise click.BadParameter(problem, param_hint="'-o' / '--output'")

    outcome = take_snapshot(
        manifests_dir, cluster, output, _connector(bootstrap_servers), parquet=snapshot_format == "parquet", sizes=sizes
    )
    click.echo(f"{outcome.path}: {outcome.topics} topics, {outcome.partitions} partitions of {outcome.cluster}.", err=True)
    for warning in outcome.warnings:
        click.echo(f"warning: {warning}", err=True)
    return outcome.kind


class _TerminalReview:
    """`apply` without a plan file: the fresh plan on stdout, confirmed on the terminal unless --auto-approve."""

    def __init__(self, auto_approve: bool, painted: bool):
        self.auto_approve, self.painted = auto_approve, painted

    def show(self, plan: Plan) -> None:
        from reconciler.render import render_plan

        click.echo(render_plan(plan, "text", color=self.painted), nl=False, color=self.painted)

    def approve(self, plan: Plan, cluster: str) -> None:
        if self.auto_approve:
            return
        if not sys.stdin.isatty():
            raise ReconcilerError(
                "no terminal to confirm on: review the plan and pass --auto-approve, or apply a saved plan file."
            )
        click.confirm(f"Apply this plan to {cluster}?", abort=True)


@main.command()
@click.argument("plan_file", required=False, type=click.Path())
@click.option(
    "--manifests",
    "manifests_dir",
    default="manifests",
    show_default=True,
    type=click.Path(),
    help="Manifest directory (cluster connection settings; the plan to make when no PLAN_FILE).",
)
@click.option("--cluster", help="Cluster name (default: the saved plan's).")
@BOOTSTRAP_OPTION
@click.option("--auto-approve", is_flag=True, help="Apply a freshly made plan without asking.")
@click.option(
    "--allow-unfenced-truncation",
    is_flag=True,
    help="Truncate even on brokers without OffsetForLeaderEpoch (a diverged log goes undetected).",
)
@click.option(
    "--throttle",
    "throttle",
    metavar="SIZE",
    callback=_byte_rate,
    help="Replication throttle per broker while replicas are copied, e.g. 50MiB (per second); "
    "overrides the Cluster document's reassignment.throttle.",
)
@click.option(
    "--reassignment-wait",
    "reassignment_wait_s",
    metavar="DURATION",
    callback=_duration_s,
    help="How long to wait for replica reassignments before reporting them in progress, e.g. 10m "
    "(default: the Cluster document's reassignment.wait, else 5m).",
)
@click.option(
    "--elect-leaders", is_flag=True, help="After replicas are reassigned, elect each moved partition's preferred leader."
)
@click.option(
    "--cancel-reassignments",
    is_flag=True,
    help="Cancel the replica reassignments in progress on the managed topics (their replicas revert) "
    "and remove their throttles; plans nothing else. Needs --cluster, no PLAN_FILE.",
)
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True, help="Format of the result.")
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    callback=_output_file,
    help="Write the result in --format to FILE; the text result goes to stdout.",
)
@COLOR_OPTION
@handle_errors
def apply(
    plan_file: str | None,
    manifests_dir: str,
    cluster: str | None,
    bootstrap_servers: list[str] | None,
    auto_approve: bool,
    allow_unfenced_truncation: bool,
    fmt: str,
    output: str | None,
    color: bool | None = None,
    throttle: int | None = None,
    reassignment_wait_s: float | None = None,
    elect_leaders: bool = False,
    cancel_reassignments: bool = False,
) -> Outcome:
    """Apply a saved plan exactly, or plan, show, confirm and apply.

    A saved plan is refused whole, before connecting, when the manifests (--manifests) now mean
    something else for its cluster than when it was planned; the differences are listed. Every
    action's preconditions are checked against a fresh read first; an action the cluster moved
    away from is refused (and the later actions on its topic), the rest still run. The brokers
    validate every write (validate_only) before the first one is sent; if they would refuse any,
    nothing is written. Replica reassignments are throttled (--throttle), waited for up to
    --reassignment-wait and otherwise reported in progress: apply again to wait for them and
    remove the throttles. Exit 0 when every action applied, was already satisfied or is a
    reassignment still in progress; 1 otherwise.
    """
    from reconciler.render import render_apply_result

    if cancel_reassignments:
        from reconciler.app.apply_plan import cancel_reassignments as cancel

        if plan_file:
            raise ReconcilerError(
                "--cancel-reassignments takes no plan file: it cancels what is in progress on the "
                "topics the manifests declare; name the cluster with --cluster."
            )
        cancelled = cancel(manifests_dir, cluster, _connector(bootstrap_servers), progress=_progress)
        _show(lambda f, c: render_apply_result(cancelled.result, f, color=c), fmt, output, use_color(color))
        return cancelled.kind
    from reconciler.app.apply_plan import ApplyOptions, apply_changes

    options = ApplyOptions(
        allow_unfenced_truncation=allow_unfenced_truncation,
        throttle_bytes_per_s=throttle,
        reassignment_wait_s=reassignment_wait_s,
        elect_leaders=elect_leaders,
    )
    outcome = apply_changes(
        manifests_dir,
        plan_file,
        cluster,
        _connector(bootstrap_servers),
        _TerminalReview(auto_approve, use_color(color)),
        options,
        progress=_progress,
    )
    result = outcome.result
    if result is not None:
        _show(lambda f, c: render_apply_result(result, f, color=c), fmt, output, use_color(color))
    return outcome.kind


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@click.option("--cluster", help="Report on this live cluster (name from the manifests).")
@click.option("--snapshot", type=click.Path(), help="Report on a saved snapshot (JSON or Parquet).")
@click.option("--fleet", type=click.Path(), help="Report on every cluster's latest snapshot under this directory.")
@click.option(
    "--since",
    type=click.Path(),
    help="Earlier snapshot of the cluster, for data-loss signals and a change log (fleet: each cluster's previous run).",
)
@BOOTSTRAP_OPTION
@click.option(
    "--engine",
    type=click.Choice(["local", "spark", "auto"]),
    default="auto",
    show_default=True,
    help="Fleet engine: local (in-process), spark (PySpark), auto (by fleet size).",
)
@click.option(
    "--master", help="Spark master URL (spark://host:7077, yarn, k8s://https://host, local[4]); implies the Spark engine."
)
@click.option(
    "--conf",
    "spark_conf",
    multiple=True,
    metavar="KEY=VALUE",
    callback=_spark_settings,
    help="A Spark setting, as spark-submit takes it (spark.executor.memory=4g, spark.pyspark.python=...); repeatable.",
)
@click.option(
    "--spark-log-level",
    type=click.Choice(["OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL"], case_sensitive=False),
    help="Show Spark's own log at this level (default: none on success, errors in one paragraph).",
)
@click.option(
    "--executor-wait",
    callback=_duration_s,
    metavar="DURATION",
    help="Spark: give up when the cluster has granted no executor after this long while a job waits (default 3m).",
)
@click.option(
    "--tables",
    type=click.Path(),
    help="Write Parquet tables (drift_items/, pending_truncations/, retention_lowered/, changes/) to DIR.",
)
@click.option(
    "--sizes/--no-sizes",
    default=True,
    show_default=True,
    help="Live: read partition sizes (DescribeLogDirs) to estimate the bytes truncations would free.",
)
@click.option(
    "--ignore-topic",
    "ignore_topics",
    multiple=True,
    metavar="REGEX",
    callback=_regexes,
    help="Never report topics matching REGEX as unmanaged (besides internal `__*` ones); repeatable.",
)
@click.option("--format", "fmt", type=click.Choice(DRIFT_FORMATS), default="text", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    callback=_output_file,
    help="Write the report in --format to FILE; a text summary goes to stdout.",
)
@COLOR_OPTION
@handle_errors
def drift(
    manifests_dir: str,
    cluster: str | None,
    snapshot: str | None,
    fleet: str | None,
    since: str | None,
    bootstrap_servers: list[str] | None,
    engine: str,
    master: str | None,
    spark_conf: dict[str, str],
    spark_log_level: str | None,
    executor_wait: float | None,
    tables: str | None,
    ignore_topics: tuple[str, ...],
    fmt: str,
    output: str | None,
    sizes: bool = True,
    color: bool | None = None,
) -> Outcome:
    """Report where clusters have moved away from Git. Exit 0 no drift, 3 drift found, 1 error.

    Findings: pending plan changes, unmanaged topics, config drift (set on the topic vs inherited
    from the broker), truncation points not yet applied (records and bytes they would free),
    under-replicated and offline partitions, and data-loss signals against an earlier snapshot.
    """
    from reconciler.app.report_drift import drift_report
    from reconciler.drift.render import render_report
    from reconciler.drift.spark_options import EXECUTOR_WAIT_S, SparkOptions

    outcome = drift_report(
        manifests_dir,
        cluster,
        snapshot,
        fleet,
        since,
        _connector(bootstrap_servers),
        engine=engine,
        master=master,
        tables=tables,
        sizes=sizes,
        ignore_topics=ignore_topics,
        spark=SparkOptions(spark_conf, spark_log_level.upper() if spark_log_level else None, executor_wait or EXECUTOR_WAIT_S),
    )
    # Drift's text has no colour yet; the option is taken so that every command takes the same ones.
    _show(lambda f, _c: render_report(outcome.report, f), fmt, output, use_color(color))
    return outcome.kind


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@click.option("--cluster", required=True, help="Cluster name from the manifests.")
@click.option(
    "--role",
    required=True,
    type=click.Choice(["reader", "planner", "applier"]),
    help="reader: plan --offline, snapshot, drift; planner: plan (validate_only); applier: apply.",
)
@click.option(
    "--principal",
    help="The principal to grant to, as kafka-acls names it (User:NAME); default: the Cluster document's SASL user.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@handle_errors
def acls(manifests_dir: str, cluster: str, role: str, principal: str | None, fmt: str) -> Outcome:
    """Print the least ACL bindings a role needs for these manifests on CLUSTER: kafka-acls
    commands (text) or bindings (JSON). Offline. Exit 0, or 1 on bad input."""
    from reconciler.app.acls import role_acls
    from reconciler.render.acls import render_acls

    outcome = role_acls(manifests_dir, cluster, role, principal)
    click.echo(render_acls(outcome.bindings, fmt, outcome.cluster, outcome.role.value, outcome.principal), nl=False)
    return outcome.kind


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@click.option("--cluster", required=True, help="Cluster name from the manifests.")
@BOOTSTRAP_OPTION
@click.option(
    "--idle-for",
    "idle_for_ms",
    metavar="DURATION",
    callback=_idle_ms,
    help="How long a topic must have been idle (e.g. 30d); default: the Policy's deletions_require_idle_for.",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="REGEX",
    callback=_regexes,
    help="Never call topics matching REGEX idle (dead-letter, retry topics); repeatable. Internal, protected and "
    "ignore_topics topics never are.",
)
@click.option("--propose", is_flag=True, help="Edit the manifests: the idle topics become state: absent with the guard.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@handle_errors
def idle(
    manifests_dir: str,
    cluster: str,
    bootstrap_servers: list[str] | None,
    idle_for_ms: int | None,
    exclude: tuple[str, ...],
    propose: bool,
    fmt: str,
) -> Outcome:
    """List the topics of CLUSTER shown idle (no record stamped within the duration, no group with
    live members, nothing unknown: docs/idle-topics.md); with --propose, write the manifest change
    that deletes them only while they stay idle. Exit 0, or 1 on error."""
    from reconciler.app.find_idle import find_idle
    from reconciler.render.idle_report import render_idle

    outcome = find_idle(manifests_dir, cluster, _connector(bootstrap_servers), idle_for_ms, exclude, propose)
    click.echo(render_idle(outcome.findings, fmt), nl=False)
    return outcome.kind


@main.command("import")
@click.argument("manifests_dir", default="manifests", type=click.Path())
@click.option("--cluster", help="Read this live cluster: its name in the manifests, or a new name with --bootstrap-servers.")
@click.option("--snapshot", type=click.Path(), help="Import from a saved snapshot instead of a live cluster.")
@BOOTSTRAP_OPTION
@click.option(
    "--topics",
    "topics_regex",
    metavar="REGEX",
    callback=_regexes,
    help="Import only topics whose name matches REGEX (searched in the name; anchor with ^...$).",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="REGEX",
    callback=_regexes,
    help="Never import topics matching REGEX; repeatable. Internal __* topics and the Cluster "
    "document's ignore_topics are always left out.",
)
@click.option(
    "--group-by",
    type=click.Choice(["prefix", "none", "owner"]),
    default="prefix",
    show_default=True,
    help="prefix: topics/CLUSTER/PREFIX.yaml per name prefix (orders.v1 -> orders); none: topics/CLUSTER.yaml; "
    "owner: topics/CLUSTER/owner-TEAM.yaml per Team whose rules claim the topics (others by prefix).",
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="Rewrite files the import writes when they already exist; the topics they declare are imported again.",
)
@click.option("--dry-run", is_flag=True, help="Print the files instead of writing them.")
@handle_errors
def import_(
    manifests_dir: str,
    cluster: str | None,
    snapshot: str | None,
    bootstrap_servers: list[str] | None,
    topics_regex: str | None,
    exclude: tuple[str, ...],
    group_by: GroupBy,
    overwrite: bool,
    dry_run: bool,
) -> Outcome:
    """Write manifests for the topics a cluster already has, so the first plan is empty.

    Declares partitions, replication factor and the configs set on each topic; inherited configs
    and truncation points are never imported. Topics the manifests already declare are skipped
    and listed. Exit 0 on success, 1 on error.
    """
    from reconciler.app.import_cluster import import_manifests
    from reconciler.render.import_summary import import_summary

    outcome = import_manifests(
        manifests_dir,
        cluster,
        snapshot,
        _connector(bootstrap_servers),
        bootstrap_servers=bootstrap_servers or (),
        topics=topics_regex,
        exclude=exclude,
        group_by=group_by,
        overwrite=overwrite,
        dry_run=dry_run,
    )
    if dry_run:
        for path, text in outcome.result.to_write().items():
            click.echo(f"==> {path} <==\n{text}")
    click.echo(import_summary(outcome.result, manifests_dir, snapshot, dry_run, topics_regex), nl=False)
    return outcome.kind


if __name__ == "__main__":  # pragma: no cover
    main()
