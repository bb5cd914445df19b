"""Leader-epoch evidence from a live cluster for data-loss signals (KIP-320 style).

For every partition of the earlier snapshot whose leader epoch has changed since, ask the current
leader OffsetForLeaderEpoch(earlier epoch): an end offset below the high watermark seen then
means the log was truncated below it (for example by an unclean leader election), even when the
high watermark has since moved past it again. Partitions whose epoch is unchanged need no
request: their high watermark alone shows truncation.

The adapter call used is `offsets_for_leader_epochs({(topic, partition): epoch}) ->
{(topic, partition): end_offset}` (-1 for unknown), batched per leader broker by the adapter.
An adapter without it yields no leader-epoch evidence; offsets going backwards are still found.
"""
from __future__ import annotations

from reconciler.models.observed import ObservedState


def epoch_requests(earlier: ObservedState, observed: ObservedState) -> dict[tuple[str, int], int]:
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


def epoch_end_offsets(kafka, earlier: ObservedState, observed: ObservedState) -> dict[tuple[str, int], int]:
    requests = epoch_requests(earlier, observed)
    lookup = getattr(kafka, "offsets_for_leader_epochs", None)
    if not requests or lookup is None:
        return {}
    return dict(lookup(requests))
