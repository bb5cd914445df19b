"""A fleet's clusters, each drifted on its own: the work both drift engines run per cluster (the
local engine in this process, the Spark engine in its tasks), and the report of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timezone

from pydantic import ValidationError

from reconciler.drift.compute import assemble_cluster, cluster_drift
from reconciler.drift.disk import maybe_unbounded
from reconciler.drift.idle_topics import with_idle
from reconciler.drift.model import ClusterDrift, DriftReport
from reconciler.errors import ReconcilerError, shown, shown_text
from reconciler.files.snapshot_bytes import Snapshot
from reconciler.models.desired import DesiredState
from reconciler.models.observed import ObservedState
from reconciler.plan.planner import PlanOptions, plan


def drift_for_cluster(
    desired: DesiredState,
    observed: ObservedState,
    earlier: ObservedState | None = None,
    epoch_end_offsets: Mapping[tuple[str, int], int] | None = None,
    options: PlanOptions = PlanOptions(),
    epoch_unanswered: Mapping[tuple[str, int], str] | None = None,
) -> ClusterDrift:
    """One cluster, in-process: the whole cluster planned at once, then classified.

    `epoch_end_offsets` and `epoch_unanswered`: leader-epoch evidence from a live cluster
    (`reconciler.drift.live.epoch_evidence`)."""
    return cluster_drift(
        desired, observed, plan(desired, observed.to_plan_on(), options, disk=False), earlier, epoch_end_offsets, epoch_unanswered
    )


def report_of(clusters: list[ClusterDrift], engine: str, generated_at: datetime | None = None) -> DriftReport:
    return DriftReport(
        generated_at=generated_at or datetime.now(timezone.utc), engine=engine, clusters=sorted(clusters, key=lambda c: c.cluster)
    )


def cluster_of_fleet(
    desired: DesiredState, cluster: str, latest: Snapshot, before: Snapshot | None, options: PlanOptions = PlanOptions()
) -> ClusterDrift:
    """One cluster of a fleet, from its latest snapshot and the one before it: the local engine's
    work per cluster, and each Spark task's (on the files' bytes Spark read)."""
    found = _columnar_cluster(desired, cluster, latest, before, options)
    return found or _whole_cluster(desired, cluster, latest, before, options)


def _whole_cluster(
    desired: DesiredState, cluster: str, latest: Snapshot, before: Snapshot | None, options: PlanOptions
) -> ClusterDrift:
    from reconciler.files.snapshot import load_snapshot

    observed = load_snapshot(latest)  # checked (reconciler.files): refused whole if bad
    earlier = load_snapshot(before) if before is not None else None
    _check_cluster(latest, observed, cluster)
    if before is not None and earlier is not None:
        _check_cluster(before, earlier, cluster)
    return drift_for_cluster(desired, observed, earlier, options=options)


def _columnar_cluster(
    desired: DesiredState, cluster: str, latest: Snapshot, before: Snapshot | None, options: PlanOptions
) -> ClusterDrift | None:
    from reconciler.drift.quiet import columnar_topics
    from reconciler.files.snapshot import load_snapshot_columns

    now = load_snapshot_columns(latest)
    if now is None:
        return None
    earlier = load_snapshot_columns(before) if before is not None else None
    if before is not None and earlier is None:
        return None
    _check_cluster(latest, now.state, cluster)
    if before is not None and earlier is not None:
        _check_cluster(before, earlier.state, cluster)
    topics = columnar_topics(desired, now, earlier, options)
    # The disk findings read only the topics that may have no limit (models built for those alone).
    # Decided once per distinct configs: most topics of a cluster list equal ones.
    verdicts = {c: maybe_unbounded({k: v for k, v, *_ in c}) for c in set(now.configs)}
    unbounded = now.topics([i for i, c in enumerate(now.configs) if verdicts[c]])
    then = None
    if earlier is not None:
        then = earlier.with_topics(earlier.topics([i for i, name in enumerate(earlier.names) if name in unbounded]))
    idle_after = desired.policy.idle_after_ms
    if idle_after is not None:
        internal = {n for n, flagged in zip(now.names, now.internal, strict=True) if flagged}
        try:
            activity = now.activity(now.maybe_idle(idle_after))
            seen = None
            if earlier is not None:
                index = {n: i for i, n in enumerate(earlier.names)}
                seen = earlier.activity(sorted(index[n] for n in activity if n in index))
        except ValidationError:
            return None  # the file reader reports it
        topics = with_idle(desired, topics, activity, internal, seen)
    return assemble_cluster(now.with_topics(unbounded), then, topics, desired.policy)


def desired_of(desired_for: Callable[[str], DesiredState], cluster: str, path: object) -> DesiredState:
    """The cluster's desired state; a cluster the manifests do not declare is reported with the
    snapshot that names it."""

    try:
        return desired_for(cluster)
    except ReconcilerError as e:
        raise ReconcilerError(
            f"{path} is a snapshot of cluster {shown(cluster)}, which the manifests cannot plan: {shown_text(str(e), 500)}"
        ) from e


def _check_cluster(path: Snapshot, observed: ObservedState, cluster: str) -> None:
    if observed.cluster != cluster:
        raise ReconcilerError(
            f"{path} holds a snapshot of cluster {shown(observed.cluster)} but lies under "
            f"{shown(cluster)}; fleet Parquet snapshots are laid out as <cluster>/<run>.parquet."
        )
