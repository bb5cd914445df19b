"""Where a topic's replicas stand, for drift reports: reassignments in progress, replicas left on
brokers the cluster drains, and partitions led by a replica other than their preferred leader.

Pure: one observed topic (with its reassignments in progress and the cluster's drained brokers)
in, one `ReplicaHealth` (or None when all is well) out; and the report items it makes, one per
topic and kind. Under-replicated and offline partitions stay per partition (`ReplicaProblem`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from reconciler.drift.model import DriftItem, ReassigningPartition, ReplicaHealth
from reconciler.errors import noun
from reconciler.models.observed import ObservedTopic, PartitionReassignment

SHOWN = 5  # partitions named in one item's detail; the count says how many there are


def replica_health(
    observed: ObservedTopic, drain: Iterable[int] = (), reassigning: Mapping[int, PartitionReassignment] | None = None
) -> ReplicaHealth | None:
    drain, reassigning = frozenset(drain), reassigning or {}
    moving: list[ReassigningPartition] = []
    drained: list[int] = []
    on: set[int] = set()
    not_preferred: list[int] = []
    for p in observed.partitions:
        running = reassigning.get(p.partition)
        # What the partition keeps: a reassignment moving it off a drained broker is not done yet.
        kept = [b for b in p.replicas if running is None or b not in running.removing_replicas]
        if running is not None:
            moving.append(
                ReassigningPartition(
                    partition=p.partition,
                    replicas=list(p.replicas),
                    adding=list(running.adding_replicas),
                    removing=list(running.removing_replicas),
                )
            )
        if not drain.isdisjoint(p.replicas):
            drained.append(p.partition)
            on.update(drain.intersection(p.replicas))
        # A partition being reassigned keeps its leader until it is done: not yet an imbalance.
        if running is None and p.leader >= 0 and kept and p.leader != kept[0]:
            not_preferred.append(p.partition)
    if not (moving or drained or not_preferred):  # `ReplicaHealth.empty`, before building it (most topics)
        return None
    return ReplicaHealth(
        topic=observed.name,
        partitions=len(observed.partitions),
        reassigning=moving,
        drained=drained,
        drained_brokers=sorted(on),
        not_preferred=not_preferred,
    )


def health_items(cluster: str, found: Sequence[ReplicaHealth]) -> list[DriftItem]:
    items = []
    for h in found:
        if h.drained:
            brokers = ", ".join(map(str, h.drained_brokers))
            items.append(
                DriftItem(
                    cluster=cluster,
                    kind="replicas-on-drained-broker",
                    topic=h.topic,
                    key=brokers,
                    detail=f"{_partitions(h.drained, h.partitions)} keep replicas on drained "
                    f"{noun(len(h.drained_brokers), 'broker')} {brokers}: {_named(h.drained)}",
                )
            )
        if h.reassigning:
            items.append(
                DriftItem(
                    cluster=cluster,
                    kind="reassignment-in-progress",
                    topic=h.topic,
                    detail=f"{_partitions([r.partition for r in h.reassigning], h.partitions)} being reassigned: "
                    + "; ".join(reassigning_text(r) for r in h.reassigning[:SHOWN])
                    + (" ..." if len(h.reassigning) > SHOWN else ""),
                )
            )
        if h.not_preferred:
            items.append(
                DriftItem(
                    cluster=cluster,
                    kind="leader-not-preferred",
                    topic=h.topic,
                    detail=f"{_partitions(h.not_preferred, h.partitions)} led by a replica other than the preferred "
                    f"(first) one: {_named(h.not_preferred)}; a preferred-leader election moves them back",
                )
            )
    return items


def reassigning_text(r: ReassigningPartition) -> str:
    changes = [f"+{b}" for b in r.adding] + [f"-{b}" for b in r.removing]
    return f"{r.partition} {r.replicas} {' '.join(changes) or 'reordering'}"


def _partitions(which: Sequence[int], of: int) -> str:
    return f"{len(which)} of {of} {noun(of, 'partition')}"


def _named(partitions: Sequence[int]) -> str:
    return ", ".join(map(str, partitions[:SHOWN])) + (" ..." if len(partitions) > SHOWN else "")
