"""Config changes that make the brokers delete records on their own, and an estimate of how many.
Pure: it reads an observed topic, never a connection.

What Kafka 4.0 deletes without being asked (UnifiedLog.deleteOldSegments, LogCleaner):
- Retention, while cleanup.policy contains `delete`: whole segments from the oldest, while the
  segment's largest timestamp is older than now - retention.ms, and while the log stays at or
  above retention.bytes without the segment. A negative limit is unlimited; 0 deletes everything.
  Lowering a limit, switching retention on (compact -> delete or compact,delete), or removing a
  topic's override so a lower inherited value applies all delete records.
- Compaction, while cleanup.policy contains `compact`: superseded values (older records whose key
  is written again later) and records without a key are removed; tombstones go after
  delete.retention.ms; nothing younger than min.compaction.lag.ms is compacted. Switching it on,
  or lowering those two, deletes records (not counted: which values are superseded is not readable).
- Tiered storage: retention.* is the total over local and remote storage. local.retention.* (-2:
  the same as retention.*) only removes local copies of segments already copied to remote storage,
  which stay readable: not a deletion. Turning remote.storage.enable off with
  remote.log.delete.on.disable deletes what only remote storage holds (not counted).
- segment.ms / segment.bytes only decide where segments end: smaller segments let retention delete
  closer to its limit, but they delete nothing on their own.

The estimate is an upper bound per partition: for a time limit, ListOffsets by the timestamp
now - retention.ms gives the first offset the broker keeps at most (it keeps the whole segment
holding it); for a size limit, the bytes beyond the limit, in records proportionally.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from reconciler import kafka_configs
from reconciler.models.observed import ConfigSource, ObservedPartition, ObservedState, ObservedTopic
from reconciler.models.plan import ConfigChange, PartitionExpiry, RetentionCut
from reconciler.units import format_bytes, human_duration

# Keys whose values decide what the brokers delete: read from the topic, and re-checked at apply.
RETENTION_KEYS = ("cleanup.policy", "retention.ms", "retention.bytes")
SETTINGS_KEYS = (
    *RETENTION_KEYS,
    "delete.retention.ms",
    "min.compaction.lag.ms",
    "local.retention.ms",
    "local.retention.bytes",
    "remote.storage.enable",
    "remote.log.delete.on.disable",
    "segment.ms",
    "segment.bytes",
)
_INHERITED = (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, ConfigSource.STATIC_BROKER_CONFIG, ConfigSource.DEFAULT_CONFIG)


# The recent window a partition's ingest rate is measured over (reconciler.plan.capacity): its
# lookup is one more ListOffsets by time, in the same batched requests.
INGEST_WINDOW_MS = 86_400_000


def time_lookup(now_ms: int, retention_ms: int) -> int:
    """The timestamp whose ListOffsets answer bounds what a time limit deletes."""
    return now_ms - retention_ms


@dataclass(frozen=True)
class Settings:
    """A topic's effective settings that decide what the brokers delete."""

    policy: frozenset[str]
    retention_ms: int  # negative: unlimited
    retention_bytes: int
    delete_retention_ms: int
    min_compaction_lag_ms: int
    local_retention_ms: int  # -2: the same as retention.ms
    local_retention_bytes: int
    remote_storage: bool
    remote_delete_on_disable: bool
    segment_ms: int
    segment_bytes: int

    @property
    def time_limit(self) -> int | None:
        """The retention.ms that deletes, or None (unlimited, or no `delete` in the policy)."""
        return self.retention_ms if "delete" in self.policy and self.retention_ms >= 0 else None

    @property
    def size_limit(self) -> int | None:
        return self.retention_bytes if "delete" in self.policy and self.retention_bytes >= 0 else None

    @property
    def compacted(self) -> bool:
        return "compact" in self.policy

    def local_time(self) -> int:
        return self.retention_ms if self.local_retention_ms == -2 else self.local_retention_ms

    def local_size(self) -> int:
        return self.retention_bytes if self.local_retention_bytes == -2 else self.local_retention_bytes


def settings(value: Callable[[str], str | None]) -> Settings:
    """Settings from `value(key)`, the effective value of each key of SETTINGS_KEYS (None: Kafka's default)."""
    return settings_of(tuple(map(value, SETTINGS_KEYS)))


@lru_cache(maxsize=4096)
def settings_of(values: tuple[str | None, ...]) -> Settings:
    """Settings from the effective values of SETTINGS_KEYS, in that order. Cached: a cluster's
    topics share a few combinations, and a drift report or a plan reads each topic's several times."""
    given = dict(zip(SETTINGS_KEYS, values, strict=True))

    def text(key: str) -> str:
        found = given[key]
        return found if found is not None else kafka_configs.TOPIC_CONFIGS[key].default

    def number(key: str) -> int:
        try:
            return int(text(key).strip())
        except ValueError:  # not a number Kafka would accept; the brokers refuse the change anyway
            return int(kafka_configs.TOPIC_CONFIGS[key].default)

    def flag(key: str) -> bool:
        return text(key).strip().lower() == "true"

    return Settings(
        policy=frozenset(v.strip() for v in text("cleanup.policy").split(",") if v.strip()),
        retention_ms=number("retention.ms"),
        retention_bytes=number("retention.bytes"),
        delete_retention_ms=number("delete.retention.ms"),
        min_compaction_lag_ms=number("min.compaction.lag.ms"),
        local_retention_ms=number("local.retention.ms"),
        local_retention_bytes=number("local.retention.bytes"),
        remote_storage=flag("remote.storage.enable"),
        remote_delete_on_disable=flag("remote.log.delete.on.disable"),
        segment_ms=number("segment.ms"),
        segment_bytes=number("segment.bytes"),
    )


def inherited_values(observed: ObservedState) -> dict[str, str]:
    """What a topic inherits for each retention key once its own override is deleted: the value
    another topic of the cluster inherits (a broker setting or Kafka's default), else Kafka's
    default. Read from the snapshot because DescribeConfigs of a topic shows only its own value."""
    found: dict[str, str] = {}
    missing = list(SETTINGS_KEYS)  # a key no broker reports leaves this scan going through every topic
    for name in sorted(observed.topics):
        configs = observed.topics[name].configs
        for key in missing:
            config = configs.get(key)
            if config is not None and config.source in _INHERITED and config.value is not None:
                found[key] = config.value
        if len(found) == len(SETTINGS_KEYS):
            break  # usually the first topic read holds them all
        missing = [key for key in missing if key not in found]
    return {key: found.get(key, kafka_configs.TOPIC_CONFIGS[key].default) for key in SETTINGS_KEYS}


def before_and_after(
    changes: Sequence[ConfigChange], topic: ObservedTopic, inherited: Mapping[str, str]
) -> tuple[Settings, Settings]:
    """The topic's settings now, and once `changes` are applied (a key's last change counts)."""
    configs = topic.configs
    now = []
    for key in SETTINGS_KEYS:
        config = configs.get(key)
        now.append(config.value if config is not None and config.value is not None else inherited.get(key))
    then = list(now)
    for change in changes:
        at = _POSITION.get(change.key)
        if at is not None:
            then[at] = change.after if change.op == "set" else inherited.get(change.key)
    return settings_of(tuple(now)), settings_of(tuple(then))


_POSITION = {key: i for i, key in enumerate(SETTINGS_KEYS)}


@dataclass(frozen=True)
class Classification:
    effects: tuple[str, ...] = ()  # what the brokers delete, one cause each; empty: nothing
    notes: Mapping[str, str] = field(default_factory=dict)  # key -> why it deletes nothing on its own
    retention_ms: int | None = None  # the time limit that cuts, if one does
    retention_bytes: int | None = None

    @property
    def destructive(self) -> bool:
        return bool(self.effects)


@lru_cache(maxsize=4096)
def classify(before: Settings, after: Settings) -> Classification:
    """What going from `before` to `after` makes the brokers delete. Cached: a cluster's topics
    share a few pairs of settings (the result is shared: never changed by its callers)."""
    effects: list[str] = []
    notes: dict[str, str] = {}
    policy_change = f"cleanup.policy {_policy(before)} -> {_policy(after)}"
    retention_on = "delete" in after.policy and "delete" not in before.policy
    cut_ms = cut_bytes = None
    if after.time_limit is not None and (before.time_limit is None or after.time_limit < before.time_limit):
        cut_ms = after.time_limit
        cause = (
            f"retention turns on, {policy_change}"
            if retention_on
            else f"retention.ms {_duration(before.time_limit)} -> {_duration(cut_ms)}"
        )
        effects.append(f"records older than {_duration(cut_ms)} are deleted: {cause}")
    if after.size_limit is not None and (before.size_limit is None or after.size_limit < before.size_limit):
        cut_bytes = after.size_limit
        cause = (
            f"retention turns on, {policy_change}"
            if retention_on
            else f"retention.bytes {_size(before.size_limit)} -> {_size(cut_bytes)}"
        )
        effects.append(f"the oldest records beyond {_size(cut_bytes)} per partition are deleted: {cause}")
    if after.compacted and not before.compacted:
        effects.append(
            f"compaction turns on, {policy_change}: superseded values (older records whose key is "
            "written again) and records without a key are removed"
        )
    elif after.compacted:
        if after.min_compaction_lag_ms < before.min_compaction_lag_ms:
            effects.append(
                f"superseded values may be compacted away after {_duration(after.min_compaction_lag_ms)} "
                f"instead of {_duration(before.min_compaction_lag_ms)} (min.compaction.lag.ms)"
            )
        if after.delete_retention_ms < before.delete_retention_ms:
            effects.append(
                f"tombstones are removed after {_duration(after.delete_retention_ms)} instead of "
                f"{_duration(before.delete_retention_ms)} (delete.retention.ms): consumers further behind "
                "miss the deletions"
            )
    if before.remote_storage and not after.remote_storage and after.remote_delete_on_disable:
        effects.append(
            "tiered storage turns off with remote.log.delete.on.disable: the records held only in remote storage are deleted"
        )
    if after.remote_storage and (
        _lower(after.local_time(), before.local_time()) or _lower(after.local_size(), before.local_size())
    ):
        for key in ("local.retention.ms", "local.retention.bytes"):
            notes[key] = (
                "local copies of segments already in remote storage go sooner; the records stay readable from remote storage"
            )
    if after.time_limit is not None or after.size_limit is not None:
        for key, was, now in (
            ("segment.ms", before.segment_ms, after.segment_ms),
            ("segment.bytes", before.segment_bytes, after.segment_bytes),
        ):
            if now < was:
                notes[key] = "smaller segments let retention delete closer to its limit; deletes nothing on its own"
    return Classification(tuple(effects), notes, cut_ms, cut_bytes)


def raises_a_limit(before: Settings, after: Settings) -> bool:
    """Whether the change lets the log hold more: a time or size limit raised or removed (delete
    policy on both sides; compaction switched on is its own case)."""

    def higher(was: int | None, now: int | None) -> bool:
        return was is not None and (now is None or now > was)

    return "delete" in after.policy and (
        higher(before.time_limit, after.time_limit) or higher(before.size_limit, after.size_limit)
    )


def _lower(after: int, before: int) -> bool:
    return after >= 0 and (before < 0 or after < before)


def _policy(s: Settings) -> str:
    return ",".join(sorted(s.policy)) or "(none)"


def _duration(ms: int | None) -> str:
    return "unlimited" if ms is None or ms < 0 else human_duration(ms) if ms else "0"


def _size(n: int | None) -> str:
    if n is None or n < 0:
        return "unlimited"
    text = format_bytes(n)
    return text + " bytes" if text.isdigit() else text


# -- stepping: the policy's max_retention_decrease --------------------------------------------


def lowest_allowed(current: int, max_decrease: float) -> int:
    """The lowest limit one apply may set below a finite `current` limit: (1 - max_decrease) x
    current, rounded up, and always at least one unit (ms or byte) lower so that stepping ends."""
    keep = 1 - Fraction(repr(max_decrease))  # the decimal the manifest wrote, not its binary float
    return max(0, min(current - 1, -(-current * keep.numerator // keep.denominator)))


def steps(current: int, target: int, max_decrease: float) -> list[int]:
    """The limit each apply sets going from `current` down to `target`, one allowed step each; the
    last is `target`. Bounded: max_decrease is at least 0.01 (thousands of steps at most)."""
    found = []
    while current > target:
        current = max(target, lowest_allowed(current, max_decrease))
        found.append(current)
    return found


def shown_limit(key: str, value: int | None, raw: bool = False) -> str:
    """A retention.ms or retention.bytes limit in words: "30d", "1GiB", "unlimited"; with `raw`, the
    number too where the words round or rename it: "7d 12h (648000000)"."""
    shown = _duration(value) if key.endswith(".ms") else _size(value)
    return shown if not raw or value is None or shown.split(" ")[0] == str(value) else f"{shown} ({value})"


# -- the estimate ----------------------------------------------------------------------------


def estimate(
    partition: ObservedPartition, retention_ms: int | None, retention_bytes: int | None, now_ms: int | None
) -> tuple[PartitionExpiry, str | None]:
    """What the limits delete from one partition at most, and why it is unknown where it is."""
    unreadable = partition.unreadable
    if unreadable is not None and (partition.high_watermark < 0 or partition.leader < 0):
        return PartitionExpiry(partition=partition.partition), f"the partition {unreadable}"
    start, end, count = partition.log_start_offset, partition.high_watermark, partition.record_count
    size = partition.size_bytes
    time_keep = size_keep = start
    excess_bytes = 0
    unknown = []
    if retention_ms is not None:
        found = partition.offsets_by_timestamp.get(time_lookup(now_ms, retention_ms)) if now_ms is not None else None
        if found is None:
            unknown.append(
                "its offsets by time were not read for this limit"
                if now_ms is not None
                else "the observation has no time to measure retention from"
            )
        else:
            # -1: no record at or after the time, so every record is older (the active segment goes too).
            time_keep = end if found < 0 else min(max(found, start), end)
    if retention_bytes is not None:
        if size is None:
            unknown.append("its size on disk was not read")
        elif size > retention_bytes:
            excess_bytes = size - retention_bytes
            # Rounded up: the estimate stays an upper bound.
            size_keep = min(end, start + -(-count * excess_bytes // size))
    known = dict(partition=partition.partition, log_start_offset=start, high_watermark=end)
    if unknown:
        return PartitionExpiry(**known), " and ".join(unknown)
    # Both limits delete from the oldest record: together, the longer prefix.
    keep = max(time_keep, size_keep)
    deleted_bytes = None
    if size is not None:
        by_time = -(-size * (time_keep - start) // count) if count else 0
        deleted_bytes = min(size, max(excess_bytes, by_time))
    return PartitionExpiry(**known, keep_from_offset=keep, bytes_to_delete=deleted_bytes), None


def retention_cut(
    classification: Classification, topic: ObservedTopic, now_ms: int | None
) -> tuple[RetentionCut, dict[int, str]]:
    """The cut a destructive classification makes on `topic`, and the partitions whose deletion is
    unknown, with why."""
    return _cut(list(classification.effects), classification.retention_ms, classification.retention_bytes, topic, now_ms)


def estimate_again(cut: RetentionCut, topic: ObservedTopic, now_ms: int | None) -> tuple[RetentionCut, dict[int, str]]:
    """The same cut estimated from a fresh read (apply, right before the change is sent)."""
    return _cut(cut.effects, cut.retention_ms, cut.retention_bytes, topic, now_ms)


def _cut(
    effects: list[str], retention_ms: int | None, retention_bytes: int | None, topic: ObservedTopic, now_ms: int | None
) -> tuple[RetentionCut, dict[int, str]]:
    partitions, unknown = [], {}
    if retention_ms is not None or retention_bytes is not None:
        for p in topic.partitions:
            expiry, why = estimate(p, retention_ms, retention_bytes, now_ms)
            partitions.append(expiry)
            if why:
                unknown[p.partition] = why
    return RetentionCut(
        effects=effects, retention_ms=retention_ms, retention_bytes=retention_bytes, partitions=partitions
    ), unknown
