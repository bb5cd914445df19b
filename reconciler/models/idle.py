"""The evidence that a topic is idle (docs/idle-topics.md), pure data: what the cluster showed of
its writes and reads at one instant, each figure with the request it came from, and what could
not be read. A figure that could not be read is None and its reason is in `unknown`: while
`unknown` is not empty the topic is never shown idle.

MAX_TIMESTAMP is the largest timestamp of the segments still on disk, not the newest record's, in
the producers' clock for CreateTime topics, and after DeleteRecords possibly a deleted record's:
an upper bound, which errs toward "active". Each field's description names its request.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from reconciler.units import from_epoch_ms

EMPTY_GROUP = "Empty"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PartitionActivity(_Model):
    partition: int = Field(ge=0)
    newest_timestamp: int | None = Field(
        None, description="ListOffsets MAX_TIMESTAMP (v7+) on the leader: the largest record timestamp on disk; -1: none"
    )
    newest_offset: int | None = Field(None, description="ListOffsets MAX_TIMESTAMP: the offset of that record")
    log_start_offset: int | None = Field(None, description="ListOffsets earliest")
    high_watermark: int | None = Field(None, description="ListOffsets latest")


class GroupActivity(_Model):
    group: str
    state: str | None = Field(None, description="ListGroups v4+: Empty, or a state with live members")
    committed: dict[int, int] = Field(default_factory=dict, description="OffsetFetch v8+: partition -> committed offset")

    @property
    def live(self) -> bool:
        return self.state != EMPTY_GROUP


class TopicActivity(_Model):
    topic: str
    read_at_ms: int
    partitions: list[PartitionActivity]
    groups: list[GroupActivity] = Field(default_factory=list)
    size_bytes: int | None = Field(None, description="DescribeLogDirs: the leader replicas' bytes")
    unknown: list[str] = Field(default_factory=list, description="why a figure could not be read: never idle while any")

    def newest(self) -> PartitionActivity | None:
        """The partition holding the largest record timestamp, None when none holds a record."""
        known = [p for p in self.partitions if p.newest_timestamp is not None and p.newest_timestamp >= 0]
        return max(known, key=lambda p: p.newest_timestamp or 0, default=None)

    def holds_nothing(self) -> bool:
        """No record on disk, nor any timestamp of one."""
        return self.newest() is None and all((p.high_watermark or 0) <= (p.log_start_offset or 0) for p in self.partitions)

    def not_idle(self, idle_for_ms: int, earlier: TopicActivity | None = None) -> list[str]:
        """Why the evidence does not show the topic idle for `idle_for_ms` before it was read:
        a figure not known, a record newer than that, a group with live members. Empty: idle.
        A topic holding no record shows nothing of how long it has been so (Kafka keeps no
        creation time), unless `earlier`, an observation at least that old, showed it the same."""
        reasons = [f"not known: {why}" for why in self.unknown]
        cut = self.read_at_ms - idle_for_ms
        if self.holds_nothing() and not (
            earlier is not None and earlier.read_at_ms <= cut and earlier.holds_nothing() and not changes_since(earlier, self)
        ):
            reasons.append(
                "not known: no partition holds a record, and Kafka does not say since when (it keeps no creation time "
                "of a topic); an earlier observation at least that old showing it unchanged would (drift --since)"
            )
        for p in self.partitions:
            if p.newest_timestamp is not None and p.newest_timestamp >= cut:
                reasons.append(
                    f"partition {p.partition} holds a record stamped {stamp(p.newest_timestamp)} (offset {p.newest_offset})"
                )
            elif (p.newest_timestamp or 0) < 0 and (p.high_watermark or 0) > (p.log_start_offset or 0):
                # -1 is what an empty partition answers; beside records, their age is simply not known.
                reasons.append(
                    f"not known: partition {p.partition} holds records (offsets {p.log_start_offset or 0} to "
                    f"{p.high_watermark}) but MAX_TIMESTAMP gave no timestamp for them"
                )
        for g in self.groups:
            if g.live:
                reasons.append(f"group {g.group} has live members (state {g.state}) and committed offsets on it")
        return reasons


def stamp(ms: int) -> str:
    return from_epoch_ms(ms).strftime("%Y-%m-%dT%H:%M:%SZ")


def changes_since(planned: TopicActivity, now: TopicActivity) -> list[str]:
    """What shows the topic written or read since `planned` was read: a newer record, a high
    watermark that moved, a group committing or gaining members; and what cannot be read now."""
    moved = [f"its activity cannot be read again: {why}" for why in now.unknown]
    before = {p.partition: p for p in planned.partitions}
    for p in now.partitions:
        seen = before.get(p.partition)
        if seen is None:
            moved.append(f"partition {p.partition} is new since the plan")
            continue
        if p.newest_timestamp is not None and seen.newest_timestamp is not None and p.newest_timestamp > seen.newest_timestamp:
            moved.append(
                f"a record was produced on partition {p.partition} stamped {stamp(p.newest_timestamp)} "
                f"(offset {p.newest_offset}) after the plan saw {_newest(seen)}"
            )
        elif p.high_watermark is not None and seen.high_watermark is not None and p.high_watermark > seen.high_watermark:
            moved.append(
                f"records were produced on partition {p.partition} since the plan (high watermark "
                f"{seen.high_watermark} -> {p.high_watermark}), with timestamps no newer than what it saw"
            )
    groups = {g.group: g for g in planned.groups}
    for g in now.groups:
        seen_group = groups.get(g.group)
        if seen_group is None or g.committed != seen_group.committed:
            changed = sorted(p for p, o in g.committed.items() if seen_group is None or seen_group.committed.get(p) != o)
            shown = ", ".join(f"{p} at offset {g.committed[p]}" for p in changed[:5])
            moved.append(f"group {g.group} committed offsets on partition(s) {shown} since the plan")
        if g.live:
            moved.append(f"group {g.group} has live members (state {g.state})")
    return moved


def _newest(p: PartitionActivity) -> str:
    return "no record" if p.newest_timestamp is None or p.newest_timestamp < 0 else stamp(p.newest_timestamp)
