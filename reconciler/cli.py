"""The `reconcile` command: parse options, call the core, render, choose the exit code.

Exit codes: 0 no changes, 2 changes present (plan), 3 drift found (drift), 1 error of any kind. Errors are one
paragraph on stderr, never a traceback (set RECONCILER_DEBUG=1 to see one).
"""
from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

import click

from reconciler.errors import ReconcilerError, shown

EXIT_OK, EXIT_ERROR, EXIT_CHANGES = 0, 1, 2
FORMATS = click.Choice(["text", "json", "markdown"])


def _fail(message: str) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def handle_errors(command):
    """Turn the reconciler's errors (and anything unexpected) into a message and exit code 1."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except ReconcilerError as e:
            _fail(str(e))
        except KeyboardInterrupt:
            _fail("interrupted; nothing further was done.")
        except OSError as e:
            if os.environ.get("RECONCILER_DEBUG"):
                raise
            if e.filename is None:
                _fail(f"the operating system refused: {e.strerror or e}. Check the disk, the paths and their permissions.")
            _fail(f"cannot use {e.filename}: {e.strerror}. Check the path and its permissions.")
        except Exception as e:  # a bug: still no traceback for the user unless asked
            if os.environ.get("RECONCILER_DEBUG"):
                raise
            _fail(f"internal error ({type(e).__name__}: {e}). This is a bug in the reconciler; "
                  "run again with RECONCILER_DEBUG=1 for a traceback and report it.")

    return wrapper


def use_color(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _output_file(ctx, param, value: str | None) -> str | None:
    """Checked before anything is read or changed: an apply must not finish with nowhere to report."""
    if value is not None:
        path = Path(value)
        if path.is_dir():
            raise click.BadParameter(f"{value} is a directory; give a file name.")
        if not path.parent.is_dir():
            raise click.BadParameter(f"directory {path.parent} does not exist; create it first.")
    return value


def _emit(text: str, output: str | None) -> None:
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as e:
            raise ReconcilerError(f"could not write {output}: {e.strerror or e}. Check the disk and the path.") from e
    else:
        click.echo(text, nl=False)


class _ReconcileGroup(click.Group):
    """click exits 2 on a usage error, which `plan` uses for "changes present": a CI job would take
    a mistyped option for a plan with changes. Every error exits 1 here."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.ClickException as e:
            e.show()
        except click.Abort:
            click.echo("Aborted; nothing was changed.", err=True)
        sys.exit(EXIT_ERROR)


@click.group(cls=_ReconcileGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kafka-reconciler")
def main() -> None:
    """Declarative Kafka topics and truncation points, reviewed in Git."""


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@handle_errors
def validate(manifests_dir: str) -> None:
    """Check the manifests and the policy, offline. Exit 0 if valid, 1 otherwise."""
    from reconciler.manifests import load_manifests

    manifests = load_manifests(manifests_dir)  # raises with every problem, policy violations included
    topics = {t for name in manifests.cluster_names() for t in manifests.desired_state(name).topics}
    click.echo(f"{len(manifests.files)} files, {len(manifests.clusters)} clusters, {len(topics)} topics: valid.")


@main.command()
@handle_errors
def schema() -> None:
    """Print the JSON Schema of the manifest format (for editor completion)."""
    from reconciler.manifests import manifest_json_schema

    click.echo(json.dumps(manifest_json_schema(), indent=2))


CLUSTER_OPTION = click.option("--cluster", help="Cluster name from the manifests (default: the snapshot's).")
BOOTSTRAP_OPTION = click.option(
    "--bootstrap-servers", envvar="RECONCILE_BOOTSTRAP_SERVERS",
    help="Override the cluster's bootstrap servers (host:port,...), e.g. from a CI secret.")


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@CLUSTER_OPTION
@click.option("--snapshot", type=click.Path(), help="Plan against a saved snapshot instead of a live cluster.")
@BOOTSTRAP_OPTION
@click.option("--offline", is_flag=True, help="Skip validating the plan on the brokers (validate_only).")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(), callback=_output_file,
              help="Write the plan in --format to FILE; the text plan goes to stdout.")
@click.option("--color/--no-color", default=None, help="Colour (default: on a terminal, unless NO_COLOR is set).")
@handle_errors
def plan(manifests_dir: str, cluster: str | None, snapshot: str | None, bootstrap_servers: str | None,
         offline: bool, fmt: str, output: str | None, color: bool | None) -> None:
    """Show what would change. Exit 0 no changes, 2 changes, 1 error.

    Against a live cluster the plan is also validated on the brokers with validate_only (nothing
    is changed); their refusals appear as errors next to the action they concern.
    """
    from reconciler.manifests import load_manifests
    from reconciler.planner import plan as make_plan
    from reconciler.render import render_plan

    manifests = load_manifests(manifests_dir)
    if snapshot:
        observed = _load_snapshot_for(manifests, snapshot, cluster)
        result = make_plan(manifests.desired_state(observed.cluster), observed)
    else:
        desired = manifests.desired_state(_require_cluster(manifests, cluster))
        with _connect(desired.cluster, bootstrap_servers) as kafka:
            result = make_plan(desired, kafka.observe_desired(desired))
            if not offline:
                from reconciler.validation import validate_on_brokers

                result = validate_on_brokers(result, kafka)
    # click strips ANSI codes off a non-terminal unless told otherwise, so --color is passed on too
    painted = use_color(color)
    if output:
        _emit(render_plan(result, fmt), output)
        click.echo(render_plan(result, "text", color=painted), nl=False, color=painted)
    else:
        painted = painted and fmt == "text"
        click.echo(render_plan(result, fmt, color=painted), nl=False, color=painted)
    sys.exit(EXIT_ERROR if result.has_errors else EXIT_CHANGES if result.has_changes else EXIT_OK)


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@click.option("--cluster", required=True, help="Cluster name from the manifests.")
@BOOTSTRAP_OPTION
@click.option("--sizes/--no-sizes", default=True, show_default=True, help="Read partition sizes (DescribeLogDirs).")
@click.option("-o", "--output", type=click.Path(), required=True,
              help="Snapshot file to write (JSON); with --format parquet, the fleet directory to write into.")
@click.option("--format", "snapshot_format", type=click.Choice(["json", "parquet"]), default="json", show_default=True,
              help="parquet: write <OUTPUT>/<cluster>/<run>.parquet, the columnar layout `drift --fleet` reads.")
@handle_errors
def snapshot(manifests_dir: str, cluster: str, bootstrap_servers: str | None, sizes: bool, output: str,
             snapshot_format: str = "json") -> None:
    """Save what the cluster looks like, for offline planning (`plan --snapshot`) and drift reports."""
    from reconciler.manifests import load_manifests
    from reconciler.snapshot import save_snapshot

    desired = load_manifests(manifests_dir).desired_state(cluster)
    with _connect(desired.cluster, bootstrap_servers) as kafka:
        observed = kafka.observe_desired(desired, sizes=sizes)
    if snapshot_format == "parquet":
        from reconciler.drift.columnar import write_snapshot_parquet

        output = str(write_snapshot_parquet(observed, output))
    else:
        save_snapshot(observed, output)
    partitions = sum(len(t.partitions) for t in observed.topics.values())
    click.echo(f"{output}: {len(observed.topics)} topics, {partitions} partitions of {cluster}.", err=True)


@main.command()
@click.argument("plan_file", required=False, type=click.Path())
@click.option("--manifests", "manifests_dir", default="manifests", show_default=True, type=click.Path(),
              help="Manifest directory (cluster connection settings; the plan to make when no PLAN_FILE).")
@click.option("--cluster", help="Cluster name (default: the saved plan's).")
@BOOTSTRAP_OPTION
@click.option("--auto-approve", is_flag=True, help="Apply a freshly made plan without asking.")
@click.option("--allow-unfenced-truncation", is_flag=True,
              help="Truncate even on brokers without OffsetForLeaderEpoch (a diverged log goes undetected).")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True, help="Format of the result.")
@click.option("-o", "--output", type=click.Path(), callback=_output_file, help="Write the result in --format to FILE.")
@handle_errors
def apply(plan_file: str | None, manifests_dir: str, cluster: str | None, bootstrap_servers: str | None,
          auto_approve: bool, allow_unfenced_truncation: bool, fmt: str, output: str | None) -> None:
    """Apply a saved plan exactly, or plan, show, confirm and apply.

    Every action's preconditions are checked against a fresh read and the current manifests
    first; an action the cluster moved away from, or that the manifests no longer ask for or
    allow, is refused (and the later actions on its topic), the rest still run. The brokers
    validate every write (validate_only) before the first one is sent; if they would refuse any,
    nothing is written. Exit 0 when every action applied (or was already satisfied), 1 otherwise.
    """
    from reconciler.apply import ApplyOptions, apply_plan
    from reconciler.manifests import load_manifests
    from reconciler.planner import plan as make_plan
    from reconciler.render import render_apply_result, render_plan
    from reconciler.validation import validate_on_brokers

    manifests = load_manifests(manifests_dir)
    if plan_file:
        from reconciler.render.json import load_plan_file

        saved = load_plan_file(plan_file)
        if cluster and cluster != saved.cluster:
            raise ReconcilerError(f"{plan_file} is a plan for {shown(saved.cluster)}, not {shown(cluster)}.")
        if saved.cluster not in manifests.clusters:
            raise ReconcilerError(f"{plan_file} is a plan for cluster {shown(saved.cluster)}, which the manifests in "
                                  f"{manifests_dir} do not declare (known: {', '.join(manifests.cluster_names())}).")
        cluster = saved.cluster
    desired = manifests.desired_state(_require_cluster(manifests, cluster))
    with _connect(desired.cluster, bootstrap_servers) as kafka:
        if plan_file:
            to_apply = saved
        else:
            # The same preflight as `plan`: what the brokers would refuse is shown now, and nothing is applied.
            to_apply = validate_on_brokers(make_plan(desired, kafka.observe_desired(desired)), kafka)
            click.echo(render_plan(to_apply, "text", color=use_color(None)), nl=False)
            if not to_apply.has_changes or to_apply.has_errors:
                sys.exit(EXIT_ERROR if to_apply.has_errors else EXIT_OK)
            if not auto_approve:
                if not sys.stdin.isatty():
                    raise ReconcilerError("no terminal to confirm on: review the plan and pass --auto-approve, "
                                          "or apply a saved plan file.")
                click.confirm(f"Apply this plan to {desired.cluster.name}?", abort=True)
        options = ApplyOptions(allow_unfenced_truncation=allow_unfenced_truncation)
        result = apply_plan(to_apply, kafka, desired, options, progress=lambda m: click.echo(m, err=True))
        follow_up = make_plan(desired, kafka.observe_desired(desired))
    result = result.model_copy(update={"follow_up": follow_up})
    if output:  # what was done is shown first, whatever happens to the file
        click.echo(render_apply_result(result, "text"), nl=False)
    _emit(render_apply_result(result, fmt), output)
    sys.exit(EXIT_OK if result.succeeded else EXIT_ERROR)


EXIT_DRIFT = 3


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@click.option("--cluster", help="Report on this live cluster (name from the manifests).")
@click.option("--snapshot", type=click.Path(), help="Report on a saved snapshot (JSON or Parquet).")
@click.option("--fleet", type=click.Path(), help="Report on every cluster's latest snapshot under this directory.")
@click.option("--since", type=click.Path(),
              help="Earlier snapshot of the cluster, for data-loss signals (fleet: each cluster's previous run).")
@BOOTSTRAP_OPTION
@click.option("--engine", type=click.Choice(["local", "spark", "auto"]), default="auto", show_default=True,
              help="Fleet engine: local (in-process), spark (PySpark), auto (by fleet size).")
@click.option("--master", help="Spark master URL (spark://host:7077, yarn, local[4]); implies the Spark engine.")
@click.option("--tables", type=click.Path(), help="Write Parquet tables (drift_items/, pending_truncations/) to DIR.")
@click.option("--sizes/--no-sizes", default=True, show_default=True,
              help="Live: read partition sizes (DescribeLogDirs) to estimate the bytes truncations would free.")
@click.option("--ignore-topic", "ignore_topics", multiple=True, metavar="REGEX",
              help="Never report topics matching REGEX as unmanaged (besides internal `__*` ones); repeatable.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown", "html"]), default="text",
              show_default=True)
@click.option("-o", "--output", type=click.Path(), callback=_output_file,
              help="Write the report in --format to FILE; a text summary goes to stdout.")
@handle_errors
def drift(manifests_dir: str, cluster: str | None, snapshot: str | None, fleet: str | None, since: str | None,
          bootstrap_servers: str | None, engine: str, master: str | None, tables: str | None,
          ignore_topics: tuple[str, ...], fmt: str, output: str | None, sizes: bool = True) -> None:
    """Report where clusters have moved away from Git. Exit 0 no drift, 3 drift found, 1 error.

    Findings: pending plan changes, unmanaged topics, config drift (set on the topic vs inherited
    from the broker), truncation points not yet applied (records and bytes they would free),
    under-replicated and offline partitions, and data-loss signals against an earlier snapshot.
    """
    from reconciler.drift import engine as drift_engine
    from reconciler.drift.render import render_report
    from reconciler.manifests import load_manifests
    from reconciler.planner import PlanOptions

    if sum(x is not None for x in (cluster if not snapshot else None, snapshot, fleet)) != 1:
        raise ReconcilerError("give one of --cluster NAME (live), --snapshot FILE or --fleet DIR.")
    manifests = load_manifests(manifests_dir)
    options = PlanOptions(ignore_topics=tuple(ignore_topics))
    if fleet:
        if since:
            raise ReconcilerError("--since is for one cluster; with --fleet each cluster's previous snapshot "
                                  "under the fleet directory is the earlier state.")
        report = drift_engine.run_fleet(fleet, manifests.desired_state, engine=engine, master=master,
                                        tables=tables, options=options).report
    else:
        from reconciler.snapshot import check_cluster, load_snapshot

        earlier = load_snapshot(since) if since else None  # JSON or Parquet, checked; refused whole if bad
        evidence = None
        if snapshot:
            observed = check_cluster(load_snapshot(snapshot), snapshot, manifests, cluster)
            desired = manifests.desired_state(observed.cluster)
        else:
            desired = manifests.desired_state(cluster)
            with _connect(desired.cluster, bootstrap_servers) as kafka:
                observed = kafka.observe_desired(desired, sizes=sizes)
                if earlier is not None:
                    from reconciler.drift.live import epoch_evidence

                    evidence = epoch_evidence(kafka, earlier, observed)
        if earlier is not None and earlier.cluster != observed.cluster:
            raise ReconcilerError(f"--since {since} is a snapshot of {shown(earlier.cluster)}, not "
                                  f"{shown(observed.cluster)}.")
        result = drift_engine.drift_for_cluster(
            desired, observed, earlier, evidence.end_offsets if evidence else None, options,
            evidence.unanswered if evidence else None)
        report = drift_engine.report_of([result], "local")
        if tables:
            from reconciler.drift.tables import write_tables_local

            write_tables_local(report, tables)
    if output:
        _emit(render_report(report, fmt), output)
        click.echo(render_report(report, "text"), nl=False)
    else:
        click.echo(render_report(report, fmt), nl=False)
    sys.exit(EXIT_DRIFT if report.has_drift else EXIT_OK)


@main.command("import")
@click.argument("manifests_dir", default="manifests", type=click.Path())
@click.option("--cluster", help="Read this live cluster: its name in the manifests, or a new name with --bootstrap-servers.")
@click.option("--snapshot", type=click.Path(), help="Import from a saved snapshot instead of a live cluster.")
@BOOTSTRAP_OPTION
@click.option("--topics", "topics_regex", metavar="REGEX",
              help="Import only topics whose name matches REGEX (searched in the name; anchor with ^...$).")
@click.option("--exclude", multiple=True, metavar="REGEX",
              help="Never import topics matching REGEX; repeatable. Internal __* topics and the Cluster "
                   "document's ignore_topics are always left out.")
@click.option("--group-by", type=click.Choice(["prefix", "none"]), default="prefix", show_default=True,
              help="prefix: topics/CLUSTER/PREFIX.yaml per name prefix (orders.v1 -> orders); none: topics/CLUSTER.yaml.")
@click.option("--overwrite", is_flag=True,
              help="Rewrite files the import writes when they already exist; the topics they declare are imported again.")
@click.option("--dry-run", is_flag=True, help="Print the files instead of writing them.")
@handle_errors
def import_(manifests_dir: str, cluster: str | None, snapshot: str | None, bootstrap_servers: str | None,
            topics_regex: str | None, exclude: tuple[str, ...], group_by: str, overwrite: bool, dry_run: bool) -> None:
    """Write manifests for the topics a cluster already has, so the first plan is empty.

    Declares partitions, replication factor and the configs set on each topic; inherited configs
    and truncation points are never imported. Topics the manifests already declare are skipped
    and listed. Exit 0 on success, 1 on error.
    """
    from datetime import datetime, timezone

    from reconciler.importer import ImportOptions, import_cluster
    from reconciler.manifests import load_manifests
    from reconciler.models.desired import ClusterSpec

    root = Path(manifests_dir)
    if root.exists() and not root.is_dir():
        raise ReconcilerError(f"{manifests_dir} is a file; import writes into a manifest directory.")
    if not cluster and not snapshot:
        raise ReconcilerError("give --cluster NAME to read a live cluster, or --snapshot FILE.")
    files = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()) if root.is_dir() else []
    # Validated first: what counts as already managed is only known from manifests that load.
    manifests = load_manifests(root) if files else None
    existing = {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in files}
    servers = tuple(s.strip() for s in (bootstrap_servers or "").split(",") if s.strip())
    if snapshot:
        from reconciler.snapshot import load_snapshot

        observed = load_snapshot(snapshot)  # JSON or Parquet, checked; refused whole if bad
        # A cluster the manifests do not declare yet is what import is for: it writes its Cluster document.
        if cluster and cluster != observed.cluster:
            raise ReconcilerError(f"{snapshot} is a snapshot of cluster {shown(observed.cluster)}, not {shown(cluster)}.")
    else:
        spec = manifests.clusters.get(cluster) if manifests else None
        if spec is None:
            if not servers:
                raise ReconcilerError(
                    f"the manifests in {manifests_dir} have no cluster named {cluster!r}; pass --bootstrap-servers "
                    "host:port to read it (the import then writes a Cluster document for it).")
            spec = ClusterSpec(name=cluster, bootstrap_servers=list(servers))
        with _connect(spec, bootstrap_servers) as kafka:
            observed = kafka.observe_topics()
        if observed.cluster != cluster:
            observed = observed.model_copy(update={"cluster": cluster})
    options = ImportOptions(topics=topics_regex, exclude=exclude, group_by=group_by, overwrite=overwrite,
                            bootstrap_servers=servers, live=not snapshot, now=datetime.now(timezone.utc))
    result = import_cluster(observed, manifests, existing, options)
    _verify_import(existing, result, observed)
    if dry_run:
        for path, text in result.to_write().items():
            click.echo(f"==> {path} <==\n{text}")
    else:
        for path, text in result.to_write().items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    click.echo(_import_summary(result, manifests_dir, snapshot, dry_run, topics_regex), nl=False)


def _verify_import(existing: dict[str, str], result, observed) -> None:
    """Load the manifests as they will be after the import and plan them against what was read:
    the imported topics must plan empty. Nothing is written when they do not."""
    import tempfile

    from reconciler.errors import ManifestError
    from reconciler.manifests import load_manifests
    from reconciler.models.plan import Severity
    from reconciler.planner import plan as make_plan

    with tempfile.TemporaryDirectory(prefix="reconcile-import-") as tmp:
        for path, text in {**existing, **result.files}.items():
            (Path(tmp) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / path).write_text(text, encoding="utf-8")
        try:
            after = load_manifests(tmp)
        except ManifestError as e:
            raise ReconcilerError(
                "nothing was written: with the imported files the manifests would not load. Leave the topics "
                "concerned out with --exclude, or change the manifests, then import again.\n" + str(e)) from e
    planned = make_plan(after.desired_state(observed.cluster), observed)
    left = [f"{a.topic}: {a.kind} ({a.reason})" for a in planned.actions if a.topic in result.topics]
    left += [f"{d.topic}: {d.message}" for d in planned.diagnostics
             if d.severity is Severity.ERROR and d.topic in result.topics]
    if left:
        raise ReconcilerError("nothing was written: the imported topics would not plan empty, which is a bug in "
                              "reconcile import; please report it with this list:\n  " + "\n  ".join(left))


def _import_summary(result, manifests_dir: str, snapshot: str | None, dry_run: bool, topics_regex: str | None) -> str:
    will = "would write" if dry_run else "wrote"
    lines = [f"{result.cluster}: {len(result.topics)} topic{'s' if len(result.topics) != 1 else ''} imported"
             f"{' (dry run)' if dry_run else ''} into {manifests_dir}"]
    by_file: dict[str, list[str]] = {}
    for topic, path in result.topics.items():
        by_file.setdefault(path, []).append(topic)
    for path in result.files:
        what = "Cluster document" if path == result.cluster_file else ", ".join(sorted(by_file.get(path, [])))
        verb = "unchanged" if path in result.unchanged else ("replaced" if path in result.replaced else will)
        lines.append(f"  {verb} {path}: {what}")
    if result.dropped:
        lines.append("Dropped from the replaced files:")
        lines += [f"  {d}" for d in result.dropped]
    filtered = [s for s in result.skipped if s.reason == "filtered"]
    listed = [s for s in result.skipped if s.reason != "filtered"]
    if listed or filtered:
        lines.append(f"Skipped {len(result.skipped)}:")
        lines += [f"  {s.topic}: {s.detail}" for s in listed]
        if filtered:
            lines.append(f"  {len(filtered)} topic{'s' if len(filtered) != 1 else ''} not matching --topics {topics_regex!r}")
    if result.left_out:
        lines.append("Set on the topic but not declared:")
        lines += [f"  {x.topic}: {x.key}: {x.why}" for x in result.left_out]
    if result.topics and not dry_run:
        source = f"--snapshot {snapshot}" if snapshot else f"--cluster {result.cluster}"
        lines.append(f"Next: `reconcile plan {manifests_dir} {source}` shows no changes for the imported topics.")
    return "\n".join(lines) + "\n"


def _require_cluster(manifests, cluster: str | None) -> str:
    if not cluster:
        raise ReconcilerError(
            "name the cluster with --cluster NAME (known: " + ", ".join(manifests.cluster_names())
            + "), or plan against a saved snapshot with --snapshot FILE.")
    return cluster


def _load_snapshot_for(manifests, snapshot: str, cluster: str | None):
    from reconciler.snapshot import check_cluster, load_snapshot

    # JSON or Parquet, checked (refused whole if bad); of --cluster and of a cluster the manifests declare
    return check_cluster(load_snapshot(snapshot), snapshot, manifests, cluster)


def _connect(spec, bootstrap_servers: str | None):
    from reconciler.kafka_cluster import connect

    if bootstrap_servers:
        spec = spec.model_copy(update={"bootstrap_servers": [s.strip() for s in bootstrap_servers.split(",")]})
    return connect(spec, progress=lambda message: click.echo(message, err=True))


if __name__ == "__main__":  # pragma: no cover
    main()
