"""Idle topics in drift reports (docs/idle-topics.md): a topic is listed when the Policy sets
`idle_after` and its evidence shows it idle that long (`TopicActivity.not_idle`: no record stamped
within it, no group with live members, nothing unknown). Against an earlier observation (`--since`,
a fleet's previous run) its high watermarks and the groups' committed offsets must not have moved
either, and the earlier observation must hold its evidence: what cannot be compared is unknown,
and unknown is never idle.

Never listed: internal topics, topics the Cluster document ignores or the Policy's
`idle_exempt_topics` matches (dead-letter and retry topics: often empty, still needed), and topics
already declared absent (their deletion is a pending change). Both engines call `idle_topic`,
after planning (a quiet topic's findings are copied from another's: its evidence is its own).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from reconciler.drift.model import IdleTopic, TopicDrift
from reconciler.errors import plural
from reconciler.models.desired import DesiredState
from reconciler.models.idle import TopicActivity, changes_since, stamp
from reconciler.plan.policy import never_idle
from reconciler.render.values import size

DAY_MS, HOUR_MS = 86_400_000, 3_600_000


def with_idle(
    desired: DesiredState,
    topics: list[TopicDrift],
    activity: Mapping[str, TopicActivity],
    internal: Collection[str],
    earlier: Mapping[str, TopicActivity] | None = None,
) -> list[TopicDrift]:
    """`topics` with the idle ones' findings. `internal`: the topics Kafka flags internal;
    `earlier`: the earlier observation's evidence, when there is one."""
    if desired.policy.idle_after_ms is None:
        return topics
    out = []
    for t in topics:
        found = idle_topic(desired, t.topic, t.topic in internal, activity.get(t.topic), earlier)
        out.append(t if found is None else t.model_copy(update={"idle": found}))
    return out


def idle_topic(
    desired: DesiredState,
    name: str,
    internal: bool,
    evidence: TopicActivity | None,
    earlier: Mapping[str, TopicActivity] | None = None,
) -> IdleTopic | None:
    """The topic's finding when it is shown idle for the Policy's idle_after; None otherwise."""
    threshold = desired.policy.idle_after_ms
    if threshold is None or evidence is None or never_idle(desired, name, internal):
        return None
    before = None if earlier is None else earlier.get(name)
    if evidence.not_idle(threshold, before):
        return None
    if earlier is not None and (before is None or changes_since(before, evidence)):
        return None
    newest = evidence.newest()
    stamped = None if newest is None else newest.newest_timestamp
    return IdleTopic(
        topic=name,
        managed=name in desired.topics,
        idle_for_ms=None if stamped is None else evidence.read_at_ms - stamped,
        newest_timestamp=stamped,
        newest_partition=None if newest is None else newest.partition,
        read_at_ms=evidence.read_at_ms,
        partitions=len(evidence.partitions),
        records=sum((p.high_watermark or 0) - (p.log_start_offset or 0) for p in evidence.partitions),
        size_bytes=evidence.size_bytes,
        groups=[f"{g.group} ({g.state})" for g in evidence.groups],
        unchanged_since=earlier is not None,
    )


def idle_for_text(t: IdleTopic) -> str:
    """How long, roughly: "75d", "36h"; "no record on disk"."""
    if t.idle_for_ms is None:
        return "no record on disk"
    return f"{t.idle_for_ms // DAY_MS}d" if t.idle_for_ms >= 2 * DAY_MS else f"{t.idle_for_ms // HOUR_MS}h"


def newest_text(t: IdleTopic) -> str:
    if t.newest_timestamp is None:
        return "-"
    return f"{stamp(t.newest_timestamp)} (partition {t.newest_partition})"


def idle_detail(t: IdleTopic) -> str:
    """One line: the item's detail (text of the tables and drift_items)."""
    newest = "no record on disk" if t.newest_timestamp is None else f"newest record stamped {newest_text(t)}"
    groups = ", ".join(t.groups) if t.groups else "none"
    return (
        f"idle for {idle_for_text(t)} ({newest}; read {stamp(t.read_at_ms)}); {plural(t.partitions, 'partition')}, "
        f"{t.records:,} records, {'size unknown' if t.size_bytes is None else size(t.size_bytes)}; "
        f"groups with commits: {groups}"
        + ("; nothing written or committed since the earlier observation" if t.unchanged_since else "")
    )
