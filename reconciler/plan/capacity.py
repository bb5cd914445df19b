"""Disk capacity: what each action of a plan adds to (or frees from) each broker's disk at steady
state after it, how fast partitions take in data, and the brokers' figures against which both are
shown (docs/capacity.md). Pure: it reads observed state, never a connection.

- Ingest, per partition, in bytes per day: the records written in the last `INGEST_WINDOW_MS`
  (ListOffsets by time at `observed_at - window`, in the batched lookups the retention estimate
  uses) times the partition's bytes per record; or, given an earlier observation, the high
  watermark's growth between the two times the same bytes per record. A partition without
  recent records takes in 0; one whose lookup, size or offsets were not read is unknown, never 0.
- What an action adds, on the broker holding each replica: a raised or removed time or size
  limit, the difference between the steady-state sizes the limits allow at that rate (each
  capped by the other limit); compaction switched on is not estimated (its growth is the key
  space's); a lowered limit frees what the retention estimate deletes; a replica added by a
  reassignment costs the partition's size on its new broker and frees it on the one it leaves;
  a new topic costs `expected_bytes_per_day` x its retention x its replication factor;
  truncations and deletions free what they delete.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.models.desired import DesiredState, DesiredTopic
from reconciler.models.observed import ObservedPartition, ObservedState, ObservedTopic
from reconciler.models.plan import (
    Action,
    AddPartitions,
    AlterConfigs,
    BrokerCapacity,
    CreateTopic,
    DeleteTopic,
    DiskEstimate,
    ReassignReplicas,
    TruncateRecords,
    unhandled,
)
from reconciler.plan import retention
from reconciler.plan.retention import INGEST_WINDOW_MS
from reconciler.units import human_bytes, human_duration

DAY_MS = 86_400_000

BY_TIME = "records of the last day (ListOffsets by time) x bytes per record"
BY_GROWTH = "high watermark growth since the earlier observation x bytes per record"
CAPACITY_NOT_READ = "capacity not read"


def ingest_lookup(now_ms: int) -> int:
    """The timestamp whose ListOffsets answer gives the records of the ingest window."""
    return retention.time_lookup(now_ms, INGEST_WINDOW_MS)


@dataclass(frozen=True)
class Ingest:
    """A partition's bytes per day (None: unknown) and the method that gave it, or why it is unknown."""

    bytes_per_day: int | None
    method: str


def ingest_by_time(partition: ObservedPartition, now_ms: int | None) -> Ingest:
    """The partition's ingest over the last window, from its ListOffsets-by-time lookup."""
    unreadable = partition.unreadable
    if unreadable is not None and (partition.high_watermark < 0 or partition.leader < 0):
        return Ingest(None, f"unknown: the partition {unreadable}")
    if now_ms is None:
        return Ingest(None, "unknown: the observation has no time to measure ingest from")
    found = partition.offsets_by_timestamp.get(ingest_lookup(now_ms))
    if found is None:
        return Ingest(None, "unknown: its offsets of the last day were not read")
    recent = 0 if found < 0 else partition.high_watermark - max(found, partition.log_start_offset)
    return _rate(partition, recent, INGEST_WINDOW_MS, BY_TIME)


def ingest_by_growth(partition: ObservedPartition, earlier: ObservedPartition, elapsed_ms: int) -> Ingest:
    """The partition's ingest between an earlier observation and this one."""
    if partition.high_watermark < 0 or earlier.high_watermark < 0:
        return Ingest(None, "unknown: an observation has no offsets of the partition")
    if elapsed_ms <= 0 or partition.high_watermark < earlier.high_watermark:
        return Ingest(None, "unknown: the observations are not in order (or the log was replaced)")
    return _rate(partition, partition.high_watermark - earlier.high_watermark, elapsed_ms, BY_GROWTH)


def _rate(partition: ObservedPartition, records: int, over_ms: int, method: str) -> Ingest:
    """`records` written over `over_ms`, in bytes per day at the partition's bytes per record."""
    size, count = partition.size_bytes, partition.record_count
    if records <= 0 or count <= 0:
        return Ingest(0, method)
    if size is None:
        return Ingest(None, "unknown: its size on disk was not read")
    # Rounded up: growth is an upper bound, as the retention estimate is.
    return Ingest(-(-records * size * DAY_MS // (count * over_ms)), method)


# -- what each action adds ------------------------------------------------------------------------


def disk_estimate(
    action: Action, desired: DesiredState, observed: ObservedState, inherited: Mapping[str, str], now_ms: int | None
) -> DiskEstimate | None:
    """What `action` adds to the brokers' disks at steady state after it (negative: frees); None
    for an action that changes nothing on disk (more partitions for the same traffic, a config
    change of no retention limit)."""
    topic = observed.topics.get(action.topic)
    match action:
        case CreateTopic():
            return _new_topic(action, desired.topics.get(action.topic), observed, inherited)
        case AddPartitions():
            return None
        case ReassignReplicas():
            return _reassignment(action, topic)
        case AlterConfigs():
            return _config_change(action, topic, inherited, now_ms) if topic is not None else _unknown("the topic was not read")
        case TruncateRecords():
            return _truncation(action, topic)
        case DeleteTopic():
            return _freed(topic, {p.partition: p.size_bytes for p in topic.partitions} if topic else {}, "its partitions' sizes")
        case _:
            unhandled(action)


def _new_topic(
    action: CreateTopic, want: DesiredTopic | None, observed: ObservedState, inherited: Mapping[str, str]
) -> DiskEstimate:
    rate = want.expected_bytes_per_day if want is not None else None
    if rate is None:
        return DiskEstimate(method="unknown: no expected_bytes_per_day declared for the topic")
    settings = retention.settings(lambda key: action.configs.get(key, inherited.get(key)))
    if settings.compacted:
        return DiskEstimate(bytes_per_day=rate, method="not estimated: with compaction the topic's size follows its key space")
    retention_ms, retention_bytes = _limits(settings)
    return new_topic_estimate(action, rate, retention_ms, retention_bytes, [b.node_id for b in observed.brokers])


def new_topic_estimate(
    action: CreateTopic, bytes_per_day: int, retention_ms: int, retention_bytes: int, brokers: list[int]
) -> DiskEstimate:
    """A new topic's cost from its declared traffic: per partition, a day's bytes x its retention
    (capped by retention.bytes), on each replica's broker; where the brokers place it, spread
    evenly over `brokers`."""
    per_partition_rate = -(-bytes_per_day // action.partitions)
    size = _steady(per_partition_rate, retention_ms, retention_bytes)
    method = f"expected_bytes_per_day {human_bytes(bytes_per_day)} x retention"
    if size is None:
        unbounded = method + ": no limit, it grows until the disk is full"
        return DiskEstimate(bytes_per_day=bytes_per_day, unbounded=True, method=unbounded)
    per_broker: dict[int, int] = {}
    if action.assignments:
        for replicas in action.assignments.values():
            for b in replicas:
                per_broker[b] = per_broker.get(b, 0) + size
    elif brokers:
        total = size * action.partitions * action.replication_factor
        for i, b in enumerate(sorted(brokers)):
            per_broker[b] = total // len(brokers) + (1 if i < total % len(brokers) else 0)
        method += ", spread evenly (the brokers place it)"
    return DiskEstimate(bytes=sum(per_broker.values()), per_broker=per_broker, bytes_per_day=bytes_per_day, method=method)


def _steady(rate: int, retention_ms: int, retention_bytes: int) -> int | None:
    """A partition's steady-state size under the limits at `rate` bytes per day (None: unbounded)."""
    by_time = -(-rate * retention_ms // DAY_MS) if retention_ms >= 0 else None
    by_size = retention_bytes if retention_bytes >= 0 else None
    if rate == 0:
        return 0
    found = [s for s in (by_time, by_size) if s is not None]
    return min(found) if found else None


def _unknown(why: str) -> DiskEstimate:
    return DiskEstimate(method=f"unknown: {why}")


def _freed(topic: ObservedTopic | None, bytes_of: Mapping[int, int | None], what: str) -> DiskEstimate:
    """What deleting `bytes_of[partition]` from every replica frees, per broker."""
    if topic is None:
        return _unknown("the topic was not read")
    per_broker: dict[int, int] = {}
    unknown = []
    for p in topic.partitions:
        if p.partition not in bytes_of:
            continue
        freed = bytes_of[p.partition]
        if freed is None:
            unknown.append(p.partition)
            continue
        for b in p.replicas:
            per_broker[b] = per_broker.get(b, 0) - freed
    if unknown:
        return _unknown(_sizes_unread(unknown))
    return DiskEstimate(bytes=sum(per_broker.values()), per_broker=per_broker, method=f"frees {what} on every replica")


def _sizes_unread(partitions: list[int]) -> str:
    shown = ", ".join(map(str, partitions[:5])) + (" ..." if len(partitions) > 5 else "")
    return f"the size of partition{'s' if len(partitions) > 1 else ''} {shown} was not read"


def _truncation(action: TruncateRecords, topic: ObservedTopic | None) -> DiskEstimate:
    if topic is None:
        return _unknown("the topic was not read")
    sizes = {p.partition: p for p in topic.partitions}
    freed: dict[int, int | None] = {}
    for t in action.partitions:
        p = sizes.get(t.partition)
        count = p.record_count if p is not None else 0
        if p is None or p.size_bytes is None:
            freed[t.partition] = None
        else:
            freed[t.partition] = p.size_bytes * t.records_to_delete // count if count > 0 else 0
    return _freed(topic, freed, "up to the deleted records' share of each partition (segments go whole)")


def _reassignment(action: ReassignReplicas, topic: ObservedTopic | None) -> DiskEstimate:
    if topic is None:
        return _unknown("the topic was not read")
    sizes = {p.partition: p.size_bytes for p in topic.partitions}
    per_broker: dict[int, int] = {}
    unknown = []
    for move in action.partitions:
        size = sizes.get(move.partition)
        if size is None:
            unknown.append(move.partition)
            continue
        for b in move.adding:
            per_broker[b] = per_broker.get(b, 0) + size
        for b in move.removing:
            per_broker[b] = per_broker.get(b, 0) - size
    if unknown:
        return _unknown(_sizes_unread(unknown))
    return DiskEstimate(
        bytes=sum(per_broker.values()),
        per_broker=per_broker,
        method="the partition's size on each broker receiving a replica, freed on each broker leaving it",
    )


def _config_change(
    action: AlterConfigs, topic: ObservedTopic, inherited: Mapping[str, str], now_ms: int | None
) -> DiskEstimate | None:
    before, after = retention.before_and_after(action.changes, topic, inherited)
    if after.compacted and not before.compacted:
        return DiskEstimate(method="not estimated: with compaction the topic's size follows its key space, not its traffic")
    if action.retention is not None and action.retention.counted:
        cut = action.retention
        return _freed(topic, {p.partition: p.bytes_to_delete for p in cut.partitions}, "what the retention estimate deletes")
    if not retention.raises_a_limit(before, after):
        return None
    before_ms, before_bytes = _limits(before)
    after_ms, after_bytes = _limits(after)
    per_broker: dict[int, int] = {}
    total_rate = 0
    for p in topic.partitions:
        rate = ingest_by_time(p, now_ms)
        if rate.bytes_per_day is None:
            return DiskEstimate(method=f"partition {p.partition}: {rate.method}")
        total_rate += rate.bytes_per_day
        was, then = _steady(rate.bytes_per_day, before_ms, before_bytes), _steady(rate.bytes_per_day, after_ms, after_bytes)
        if then is None:
            continue
        added = then - (was if was is not None else then)
        for b in p.replicas:
            per_broker[b] = per_broker.get(b, 0) + added
    limits = f"retention {_limit_text(before_ms, before_bytes)} -> {_limit_text(after_ms, after_bytes)}"
    if after_ms < 0 and after_bytes < 0 and total_rate > 0:
        return DiskEstimate(
            bytes_per_day=total_rate, unbounded=True, method=f"{limits}: no limit, it grows until the disk is full ({BY_TIME})"
        )
    return DiskEstimate(
        bytes=sum(per_broker.values()), per_broker=per_broker, bytes_per_day=total_rate, method=f"{limits}: {BY_TIME}"
    )


def _limits(s: retention.Settings) -> tuple[int, int]:
    """(retention.ms, retention.bytes) that bound the log, -1 where none does."""
    return (s.time_limit if s.time_limit is not None else -1, s.size_limit if s.size_limit is not None else -1)


def _limit_text(ms: int, size: int) -> str:
    time = human_duration(ms) if ms > 0 else ("0" if ms == 0 else "unlimited")
    return time if size < 0 else f"{time} / {human_bytes(size)} per partition"


# -- per broker ---------------------------------------------------------------------------------


def broker_table(actions: list[Action], observed: ObservedState) -> list[BrokerCapacity]:
    """Per broker: its disk as read, what the actions add, and the share projected. Empty when
    capacity was not read and nothing was estimated."""
    if not observed.log_dirs and not observed.capacity_unknown and not any(a.disk is not None for a in actions):
        return []
    brokers = sorted({b.node_id for b in observed.brokers} | set(observed.log_dirs) | set(observed.capacity_unknown))
    added = dict.fromkeys(brokers, 0)
    unknown: set[int] = set()
    for action in actions:
        disk = action.disk
        if disk is None:
            continue
        if disk.bytes is None:
            if may_add(action):
                unknown |= _touched(action, observed, brokers)
            continue
        for b, n in disk.per_broker.items():
            added[b] = added.get(b, 0) + n
    rows = []
    for b in brokers:
        dirs = observed.log_dirs.get(b, [])
        rows.append(
            BrokerCapacity(
                broker=b,
                log_dirs=[d.log_dir for d in dirs],
                used_bytes=sum(d.used_bytes for d in dirs) if dirs else None,
                total_bytes=sum(d.total_bytes for d in dirs) if dirs else None,
                added_bytes=added.get(b, 0),
                added_unknown=b in unknown,
                unknown=observed.capacity_unknown.get(b) or (None if dirs else CAPACITY_NOT_READ),
            )
        )
    return rows


def may_add(action: Action) -> bool:
    """Whether an action whose figure is unknown may add to a disk (a cut, truncation or deletion only frees)."""
    if isinstance(action, AlterConfigs):
        return action.retention is None or not action.retention.counted
    return not isinstance(action, (TruncateRecords, DeleteTopic))


def _touched(action: Action, observed: ObservedState, brokers: list[int]) -> set[int]:
    """The brokers an action with an unknown figure may add to: its topic's replicas, or all."""
    topic = observed.topics.get(action.topic)
    if isinstance(action, CreateTopic):
        found = {b for replicas in action.assignments.values() for b in replicas}
        return found or set(brokers)
    return {b for p in topic.partitions for b in p.replicas} if topic is not None else set(brokers)


def capacity_unknown_line(unknown: Mapping[int, str]) -> str:
    """One line, said once, for the brokers whose capacity is not known (broker -> why): brokers
    with the same reason are named together. Unknown is never 0: nothing is estimated against it."""
    by_reason: dict[str, list[int]] = {}
    for broker, why in sorted(unknown.items()):
        by_reason.setdefault(why, []).append(broker)
    shown = "; ".join(
        f"{'broker' if len(brokers) == 1 else 'brokers'} {', '.join(map(str, brokers))}: {why}"
        for why, brokers in by_reason.items()
    )
    return f"disk capacity unknown ({shown}); usage against capacity is not checked there"


# -- the policy's max_disk_usage ------------------------------------------------------------------

WARN_FROM = 0.9  # of the limit: a warning before the error
TOP_CONTRIBUTORS = 3


def signed_bytes(n: int) -> str:
    """`+1.2 GiB`, `-300.0 MiB`, `0 B`: what an action adds to a disk, or frees."""
    return ("+" if n > 0 else "-" if n < 0 else "") + human_bytes(abs(n))


def usage_findings(table: list[BrokerCapacity], actions: list[Action], limit: float) -> list[tuple[bool, str]]:
    """(is an error, message) per broker whose projected share of its disk is above the limit (an
    error) or from WARN_FROM of it (a warning); brokers of unknown capacity or growth are left to
    the capacity line: unknown never blocks."""
    found = []
    for row in table:
        projected = row.projected_at_least
        if projected is None or row.total_bytes is None or projected / row.total_bytes < WARN_FROM * limit:
            continue
        share = projected / row.total_bytes
        above = share > limit
        contributors = sorted(
            ((a.disk.per_broker.get(row.broker, 0), a) for a in actions if a.disk is not None),
            key=lambda item: -item[0],
        )
        top = [f"{a.kind.facts.label} {a.topic} {signed_bytes(n)}" for n, a in contributors[:TOP_CONTRIBUTORS] if n > 0]
        dirs = ", ".join(row.log_dirs)
        found.append(
            (
                above,
                f"broker {row.broker} ({'log dirs' if len(row.log_dirs) > 1 else 'log dir'} {dirs}) would use "
                f"{'at least ' if row.added_unknown else ''}{human_bytes(projected)} of {human_bytes(row.total_bytes)} "
                f"({share:.1%}) after this plan, "
                f"{'above' if above else 'close to'} the policy's max_disk_usage of {limit:.0%}: used now "
                f"{human_bytes(row.used_bytes or 0)}, {signed_bytes(row.added_bytes)} from the plan"
                + (f"; most from {', '.join(top)}" if top else ""),
            )
        )
    return found


def not_checked_line(table: list[BrokerCapacity]) -> str | None:
    """Why the policy's max_disk_usage could not be checked on some brokers (None: checked on all)."""
    unread = [r.broker for r in table if r.total_bytes is None and r.unknown == CAPACITY_NOT_READ]
    growth = [r.broker for r in table if r.total_bytes is not None and r.added_unknown]  # checked as a lower bound
    parts = []
    if unread:
        parts.append(f"not checked on brokers {', '.join(map(str, unread))}: their capacity was not read")
    if growth:
        parts.append(
            f"checked on what is known on brokers {', '.join(map(str, growth))}: what the plan adds there is partly "
            "unknown or unbounded"
        )
    return f"max_disk_usage {'; '.join(parts)}" if parts else None
