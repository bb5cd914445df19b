"""What a live drift report reads beyond the plan's read: leader-epoch evidence for data-loss
signals, and the lookups an estimate of retention lowered out of band needs.

Retention lowered out of band: the estimate asks ListOffsets for `observed_at - retention.ms` with
the cluster's own (lower) retention.ms, which is only known once its configs are read, so the
plan's read cannot carry it. `retention_reads` names the topics whose lookups (or sizes) are
missing after that read, and one more read asks for all of them at once: batched like the first
(one ListOffsets per leader, one DescribeLogDirs per broker), never a request per topic, and for
the same instant (`now_ms` is the first read's), so the estimate is measured from when the
cluster was observed. Without it (a snapshot) the estimate says "unknown".

Leader-epoch evidence (KIP-320 style):

For every partition of the earlier snapshot whose leader epoch has changed since, ask the current
leader OffsetForLeaderEpoch(earlier epoch), through the adapter's `epoch_end_offsets` (the call
apply uses to fence truncations, batched per leader broker): an end offset below the high
watermark seen then means the log was truncated below it (for example by an unclean leader
election), even when the high watermark has since moved past it again. A clean leader change
keeps every committed record, so the earlier epoch then ends at or after that high watermark.
Partitions whose epoch is unchanged need no request: their high watermark alone shows truncation.

An answer with an error, no answer, or "epoch unknown" (-1: the leader no longer holds that
epoch in its cache) is no evidence either way. Such partitions are listed in the report as
unverified unless their offsets went backwards, which is still checked.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from reconciler.drift.lowered_retention import lowered_retention, missing_reads
from reconciler.models.desired import DesiredState
from reconciler.models.observed import ObservedState
from reconciler.models.plan import Action, Plan
from reconciler.plan.read_scope import ReadScope
from reconciler.ports import ClusterPort, EpochCheck, TopicPartition
from reconciler.units import epoch_ms


@dataclass(frozen=True)
class EpochEvidence:
    """What the current leaders said about the earlier snapshot's epochs."""

    end_offsets: dict[TopicPartition, int] = field(default_factory=dict)  # answered: end offset of the earlier epoch
    unanswered: dict[TopicPartition, str] = field(default_factory=dict)  # asked, no usable answer: why


def epoch_requests(earlier: ObservedState, observed: ObservedState) -> dict[TopicPartition, int]:
    """The (topic, partition) -> earlier leader epoch pairs worth asking about."""
    out = {}
    for name, before in earlier.topics.items():
        now = observed.topics.get(name)
        if now is None or (now.topic_id and before.topic_id and now.topic_id != before.topic_id):
            continue
        current = {p.partition: p for p in now.partitions}
        for p in before.partitions:
            c = current.get(p.partition)
            if c is not None and c.leader >= 0 and c.leader_epoch != p.leader_epoch and p.high_watermark > 0:
                out[(name, p.partition)] = p.leader_epoch
    return out


def epoch_evidence(kafka: ClusterPort, earlier: ObservedState, observed: ObservedState) -> EpochEvidence:
    """Ask the current leaders about every partition `epoch_requests` picks."""
    requests = epoch_requests(earlier, observed)
    if not requests:
        return EpochEvidence()
    if not kafka.supports_epoch_fencing():
        reason = "the brokers do not offer OffsetForLeaderEpoch v2+"
        return EpochEvidence(unanswered=dict.fromkeys(requests, reason))
    return classify(requests, kafka.epoch_end_offsets(requests))


def classify(requests: dict[TopicPartition, int], checks: dict[TopicPartition, EpochCheck]) -> EpochEvidence:
    ends, unanswered = {}, {}
    for tp, epoch in sorted(requests.items()):
        check = checks.get(tp)
        if check is None:
            unanswered[tp] = "no answer to OffsetForLeaderEpoch"
        elif check.error is not None:
            unanswered[tp] = f"OffsetForLeaderEpoch failed: {check.error}"
        elif check.end_offset < 0:
            unanswered[tp] = f"leader {check.leader} no longer knows epoch {epoch}"
        else:
            ends[tp] = check.end_offset
    return EpochEvidence(end_offsets=ends, unanswered=unanswered)


def retention_reads(
    desired: DesiredState, observed: ObservedState, earlier: ObservedState | None, cluster_plan: Plan
) -> ReadScope | None:
    """One read for every topic whose out-of-band retention estimate lacks its time lookup or
    partition sizes; None when none does (or the read has no time to measure from)."""
    if observed.taken_at is None:
        return None
    actions: defaultdict[str, list[Action]] = defaultdict(list)
    for a in cluster_plan.actions:
        actions[a.topic].append(a)
    timestamps: dict[str, tuple[int, ...]] = {}
    topics = set()
    for name, topic in sorted(observed.topics.items()):
        found = lowered_retention(
            topic,
            desired.topics.get(name),
            actions.get(name, []),
            earlier.topics.get(name) if earlier else None,
            observed.taken_at,
        )
        if found is None:
            continue
        lookup, sizes = missing_reads(found, topic, observed.taken_at)
        if lookup is not None:
            timestamps[name] = (lookup,)
        if lookup is not None or sizes:
            topics.add(name)
    if not topics:
        return None
    # The topics' reassignments are read again too: the second read replaces those topics whole.
    return ReadScope(
        topics=frozenset(topics),
        list_all=False,
        timestamps=timestamps,
        now_ms=epoch_ms(observed.taken_at),
        size_topics=frozenset(topics),
        reassignments=True,
    )
