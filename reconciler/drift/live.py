"""Leader-epoch evidence from a live cluster for data-loss signals (KIP-320 style).

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

from dataclasses import dataclass, field

from reconciler.models.observed import ObservedState
from reconciler.ports import ClusterPort, EpochCheck

TopicPartition = tuple[str, int]


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
