"""`reconcile snapshot`: a live cluster's observed state saved for offline planning and drift.

A read with too few rights still writes its snapshot (what was seen is still worth planning and
reporting on, and the file says what was not: `hidden_topics`, `sizes_refused`), and the outcome
carries one warning per thing not seen (and the brokers whose disk capacity is unknown), so the
command says so while it succeeds.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.app.cluster_access import Connect
from reconciler.app.outcome import Outcome
from reconciler.manifests import load_manifests
from reconciler.models.desired import ClusterSpec
from reconciler.models.observed import ObservedState
from reconciler.plan.capacity import capacity_unknown_line
from reconciler.plan.rights import hidden_topics_line, sizes_refused_line


@dataclass(frozen=True)
class SnapshotOutcome:
    path: str  # the file written (with Parquet: inside the fleet directory given)
    cluster: str
    topics: int
    partitions: int
    kind: Outcome = Outcome.DONE
    warnings: tuple[str, ...] = ()  # what the principal could not see


def take_snapshot(
    manifests_dir: str, cluster: str, output: str, connect: Connect, parquet: bool = False, sizes: bool = True
) -> SnapshotOutcome:
    """JSON to the file `output`; `parquet`: `<output>/<cluster>/<run>.parquet`, the fleet layout."""
    desired = load_manifests(manifests_dir).desired_state(cluster)
    with connect(desired.cluster) as kafka:
        observed = kafka.observe_desired(desired, sizes=sizes)
    if parquet:
        from reconciler.files.fleet import write_fleet_snapshot

        output = str(write_fleet_snapshot(observed, output))
    else:
        from reconciler.files.snapshot_json import write_snapshot_json

        write_snapshot_json(observed, output)
    partitions = sum(len(t.partitions) for t in observed.topics.values())
    return SnapshotOutcome(
        path=output,
        cluster=cluster,
        topics=len(observed.topics),
        partitions=partitions,
        warnings=unseen(observed, desired.cluster),
    )


def unseen(observed: ObservedState, spec: ClusterSpec) -> tuple[str, ...]:
    """One line per thing the read could not see: for want of rights, or the brokers' capacity."""
    found = [hidden_topics_line(observed.hidden_topics, spec)] if observed.hidden_topics else []
    found += [sizes_refused_line(observed.sizes_refused, spec)] if observed.sizes_refused else []
    return (*found, *([capacity_unknown_line(observed.capacity_unknown)] if observed.capacity_unknown else []))
