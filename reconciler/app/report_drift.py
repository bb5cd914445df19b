"""`reconcile drift`: where a live cluster, a saved snapshot or a fleet of snapshots moved away
from Git, with data-loss signals and a change log against an earlier snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reconciler.app.cluster_access import Connect
from reconciler.app.inputs import snapshot_for
from reconciler.app.outcome import Outcome
from reconciler.drift import engine as drift_engine
from reconciler.drift.by_owner import with_owners
from reconciler.drift.compute import cluster_drift
from reconciler.drift.model import DriftReport
from reconciler.drift.per_cluster import report_of
from reconciler.errors import ReconcilerError, shown
from reconciler.manifests import load_manifests
from reconciler.models.observed import ObservedState
from reconciler.plan.planner import PlanOptions, plan


@dataclass(frozen=True)
class DriftOutcome:
    report: DriftReport

    @property
    def kind(self) -> Outcome:
        return Outcome.DRIFT if self.report.has_drift else Outcome.DONE


def drift_report(
    manifests_dir: str,
    cluster: str | None,
    snapshot: str | None,
    fleet: str | None,
    since: str | None,
    connect: Connect,
    engine: str = "auto",
    master: str | None = None,
    tables: str | None = None,
    sizes: bool = True,
    ignore_topics: Sequence[str] = (),
    spark: drift_engine.SparkOptions | None = None,
) -> DriftOutcome:
    """One of: the live `cluster`, a `snapshot` file, or every cluster's latest snapshot under
    `fleet` (on the `engine` chosen). `tables`: also write the dashboards' Parquet tables there."""
    if sum(x is not None for x in (cluster if not snapshot else None, snapshot, fleet)) != 1:
        raise ReconcilerError("give one of --cluster NAME (live), --snapshot FILE or --fleet DIR.")
    spark = spark or drift_engine.SparkOptions()
    if not fleet and (master or spark.given):
        raise ReconcilerError("--master, --conf and --spark-log-level are for --fleet with the Spark engine.")
    manifests = load_manifests(manifests_dir)
    options = PlanOptions(ignore_topics=tuple(ignore_topics))
    if fleet:
        if since:
            raise ReconcilerError(
                "--since is for one cluster; with --fleet each cluster's previous snapshot "
                "under the fleet directory is the earlier state."
            )
        return DriftOutcome(
            drift_engine.run_fleet(
                fleet, manifests.desired_state, engine=engine, master=master, tables=tables, options=options, spark=spark
            ).report
        )
    from reconciler.files.snapshot import load_snapshot

    earlier = load_snapshot(since) if since else None  # JSON or Parquet, checked; refused whole if bad
    evidence = None
    if snapshot:
        observed = snapshot_for(manifests, snapshot, cluster)
        desired = manifests.desired_state(observed.cluster)
        _check_since(earlier, observed.cluster, since)
        cluster_plan = plan(desired, observed.to_plan_on(), options)  # its evidence only lists idle topics
    else:
        assert cluster is not None  # one of the three, checked above
        desired = manifests.desired_state(cluster)
        _check_since(earlier, cluster, since)  # before connecting: an unreachable cluster must not hide it
        with connect(desired.cluster) as kafka:
            from reconciler.drift.live import epoch_evidence, retention_reads

            observed = kafka.observe_desired(desired, sizes=sizes)
            cluster_plan = plan(desired, observed, options)
            missing = retention_reads(desired, observed, earlier, cluster_plan)
            if missing is not None:
                observed = observed.with_topics(kafka.observe_scope(missing, sizes=sizes))
                cluster_plan = plan(desired, observed, options)
            if earlier is not None:
                evidence = epoch_evidence(kafka, earlier, observed)
    result = cluster_drift(
        desired,
        observed,
        cluster_plan,
        earlier,
        evidence.end_offsets if evidence else None,
        evidence.unanswered if evidence else None,
    )
    report = with_owners(report_of([result], "local"), manifests.desired_state)
    if tables:
        from reconciler.drift.tables import write_tables_local

        write_tables_local(report, tables)
    return DriftOutcome(report)


def _check_since(earlier: ObservedState | None, cluster: str, since: str | None) -> None:
    if earlier is not None and earlier.cluster != cluster:
        raise ReconcilerError(f"--since {since} is a snapshot of {shown(earlier.cluster)}, not {shown(cluster)}.")
