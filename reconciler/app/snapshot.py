"""`reconcile snapshot`: a live cluster's observed state saved for offline planning and drift."""
from __future__ import annotations

from dataclasses import dataclass

from reconciler.app.connection import Connect
from reconciler.app.outcome import Outcome
from reconciler.manifests import load_manifests


@dataclass(frozen=True)
class SnapshotOutcome:
    path: str  # the file written (with Parquet: inside the fleet directory given)
    cluster: str
    topics: int
    partitions: int
    kind: Outcome = Outcome.DONE


def take_snapshot(manifests_dir: str, cluster: str, output: str, connect: Connect, parquet: bool = False,
                  sizes: bool = True) -> SnapshotOutcome:
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
    return SnapshotOutcome(path=output, cluster=cluster, topics=len(observed.topics), partitions=partitions)
