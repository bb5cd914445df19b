"""Manifests under which a synthetic fleet's replicas move (benchmarks/drift_fleet.py's clusters:
brokers 1-4, every partition on 1, 2 and 3 but for one topic in 20 with its third replicas on 4)."""

from __future__ import annotations

from reconciler.models.desired import DesiredState


def replicas_moving(desired: DesiredState, drain: list[int]) -> DesiredState:
    """`desired` draining `drain`, with replication factors changed (down to 2 and up to 4) and
    replicas pinned (as they are, and elsewhere) on some topics."""
    topics = {}
    for i, (name, t) in enumerate(sorted(desired.topics.items())):
        if i % 23 == 5:
            t = t.model_copy(update={"replication_factor": 2})
        elif i % 23 == 11:
            t = t.model_copy(update={"replication_factor": 4})
        elif i % 23 == 17:
            t = t.model_copy(update={"replica_assignment": {0: [4, 2, 1]}})
        elif i % 23 == 19:
            t = t.model_copy(update={"replica_assignment": {0: [1, 2, 3]}})
        topics[name] = t
    return desired.model_copy(update={"topics": topics, "cluster": desired.cluster.model_copy(update={"drain_brokers": drain})})
