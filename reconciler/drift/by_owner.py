"""A drift report's findings marked with the Team owning each topic, and each team's part
(docs/teams.md), so that each team can be sent its own findings. Done once on the finished report,
whichever engine made it: the owners come from the manifests, not from the cluster. A cluster whose
manifests declare no owner is left as it is."""

from __future__ import annotations

from collections.abc import Callable

from reconciler.drift.model import ClusterDrift, DriftReport, OwnerDrift
from reconciler.models.desired import DesiredState


def with_owners(report: DriftReport, desired_for: Callable[[str], DesiredState]) -> DriftReport:
    clusters = [_cluster(c, desired_for(c.cluster)) for c in report.clusters]
    return report.model_copy(update={"clusters": clusters})


def _cluster(cluster: ClusterDrift, desired: DesiredState) -> ClusterDrift:
    if not desired.teams:
        return cluster
    owners = topic_owners(desired)
    items = [i.model_copy(update={"owner": owners[i.topic]}) if i.topic in owners else i for i in cluster.items]
    kinds: dict[str, dict[str, int]] = {}
    for item in items:
        if item.owner is not None:
            counted = kinds.setdefault(item.owner, {})
            counted[item.kind] = counted.get(item.kind, 0) + 1
    summaries = [
        OwnerDrift(owner=owner, findings=sum(counted.values()), kinds=dict(sorted(counted.items())))
        for owner, counted in sorted(kinds.items())
    ]
    return cluster.model_copy(update={"items": items, "owners": summaries})


def topic_owners(desired: DesiredState) -> dict[str, str]:
    """Topic -> the Team owning it, for the topics that have one."""
    return {name: topic.owner for name, topic in desired.topics.items() if topic.owner is not None}
