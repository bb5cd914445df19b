"""One partition's log as the test cluster keeps it: offsets, record timestamps and sizes in
segments, the retention rules that delete whole segments, and the leader-epoch history.

Only what the wire protocol can observe is stored (no record payloads), in compact arrays,
because benchmarks build 100,000 partitions in one process.
"""

from __future__ import annotations

import bisect
import itertools
import time
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

NO_TIMESTAMP = -1


def now_ms() -> int:
    return int(time.time() * 1000)


class EpochHistory:
    """Kafka's LeaderEpochFileCache: (epoch, start offset) entries, both strictly increasing.

    The method bodies follow the Java class closely, because OffsetForLeaderEpoch answers and
    the data-loss checks built on them depend on its exact corner cases.
    """

    __slots__ = ("entries",)

    def __init__(self, entries: Iterable[tuple[int, int]] = ()) -> None:
        self.entries: list[tuple[int, int]] = list(entries)

    def latest_epoch(self) -> int | None:
        return self.entries[-1][0] if self.entries else None

    def earliest(self) -> tuple[int, int] | None:
        return self.entries[0] if self.entries else None

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that `epoch` starts at `start_offset` (a replica became leader, or appended
        the first batch of a new epoch)."""
        if self.entries:
            last_epoch, last_start = self.entries[-1]
            if epoch == last_epoch and start_offset >= last_start:
                return  # isUpdateNeeded() is false: nothing new
        self.entries = [(e, s) for e, s in self.entries if e < epoch and s < start_offset]
        self.entries.append((epoch, start_offset))

    def truncate_from_end(self, end_offset: int) -> None:
        """The log was truncated to `end_offset`: epochs starting at or after it are gone."""
        self.entries = [(e, s) for e, s in self.entries if s < end_offset]

    def truncate_from_start(self, start_offset: int) -> None:
        """The log start moved: drop entries starting at or before it, but keep the last of them,
        moved up to the new start offset (so the earliest entry covers the log start)."""
        removed = [(e, s) for e, s in self.entries if s <= start_offset]
        if removed:
            kept = [(e, s) for e, s in self.entries if s > start_offset]
            self.entries = [(removed[-1][0], start_offset)] + kept

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """LeaderEpochFileCache.endOffsetFor: (epoch, end offset), or (-1, -1) when unknown."""
        if requested_epoch == -1:
            return -1, -1
        if self.entries and self.entries[-1][0] == requested_epoch:
            return requested_epoch, log_end_offset
        higher = next(((e, s) for e, s in self.entries if e > requested_epoch), None)
        if higher is None:
            return -1, -1
        floor = None
        for e, s in self.entries:
            if e <= requested_epoch:
                floor = (e, s)
        if floor is None:
            return requested_epoch, higher[1]
        return floor[0], higher[1]

    def epoch_for_offset(self, offset: int) -> int:
        """The epoch the record at `offset` was written in, or -1 if unknown."""
        found = -1
        for e, s in self.entries:
            if s > offset:
                break
            found = e
        return found


class Segment:
    """One log segment: the records from `base` up to the next segment's base (or the log end).

    Like Kafka's LogSegment it keeps, besides its bytes, the largest record timestamp (time
    retention compares it) and the largest timestamp of its first write (rolling by segment.ms
    measures from it), and the file's creation and modification times, which Kafka falls back
    on when records carry no timestamp.
    """

    __slots__ = ("base", "created_ms", "first_timestamp", "max_timestamp", "modified_ms", "size")

    def __init__(self, base: int, created_ms: int):
        self.base = base
        self.size = 0
        self.first_timestamp = NO_TIMESTAMP
        self.max_timestamp = NO_TIMESTAMP
        self.created_ms = created_ms
        self.modified_ms = created_ms

    def largest_timestamp(self) -> int:
        """LogSegment.largestTimestamp: the largest record timestamp, else the last modification."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.modified_ms

    def waited_for_roll(self, max_timestamp: int, now: int) -> int:
        """LogSegment.timeWaitedForRoll, for a write whose largest timestamp is `max_timestamp`."""
        return max_timestamp - self.first_timestamp if self.first_timestamp >= 0 else now - self.created_ms

    def add(self, size: int, max_timestamp: int, now: int) -> None:
        if self.size == 0 and self.first_timestamp < 0:
            self.first_timestamp = max_timestamp
        self.size += size
        self.max_timestamp = max(self.max_timestamp, max_timestamp)
        self.modified_ms = now


@dataclass(frozen=True)
class SegmentLimits:
    """When the active segment rolls: the topic's segment.bytes and segment.ms in force."""

    segment_bytes: int
    segment_ms: int


@dataclass(frozen=True)
class RetentionRules:
    """What a retention check applies: retention.ms and retention.bytes (-1: no limit) only when
    cleanup.policy lists delete; a compact-only log is not checked at all (UnifiedLog.deleteOldSegments
    and LogManager.cleanupLogs)."""

    retention_ms: int
    retention_bytes: int
    delete: bool
    compact_only: bool


class PartitionLog:
    """Offsets [log_start, end) of one partition, with one timestamp and one byte size per record,
    in segments.

    Replication is instantaneous, so every replica holds the same records in the same segments;
    replicas differ only in what their own retention checks deleted, as each broker runs the
    check on its own schedule. `segments` are those some replica still holds (the last one is
    active); `held_from` maps a replica to the base offset of its oldest segment (absent: the
    oldest in `segments`). `log_start` is the leader's log start offset, which every answer
    reports; followers take it over at once (they fetch it) and `ahead` holds those whose own
    log start is above it because their check ran first. The record arrays start at `base`, the
    oldest segment's base offset: like Kafka, records before the log start stay on disk until
    their segment can go.

    One deviation from Kafka: when a check deletes the active segment, the new empty segment at
    the log end is shared, so a replica that has not run its check yet sees its old active
    segment closed there too (its bytes are the same; only where its next segment starts differs).
    """

    __slots__ = ("ahead", "base", "held_from", "log_start", "segments", "sizes", "sorted", "timestamps")

    def __init__(self) -> None:
        self.log_start = 0
        self.base = 0
        self.timestamps = array("q")
        self.sizes = array("l")
        # True while timestamps never decrease, which allows a binary search.
        self.sorted = True
        self.segments = [Segment(0, now_ms())]
        self.held_from: dict[int, int] = {}
        self.ahead: dict[int, int] = {}

    @property
    def end_offset(self) -> int:
        return self.base + len(self.timestamps)

    def start_at(self, offset: int) -> None:
        """Make an empty log begin at `offset`, as a log whose earlier records are long gone."""
        if self.end_offset != self.base:
            raise ValueError("only an empty log can be moved")
        self.base = self.log_start = offset
        self.segments = [Segment(offset, now_ms())]

    # -- writing ---------------------------------------------------------------------------

    def append(
        self, timestamps: Sequence[int], sizes: Sequence[int], limits: SegmentLimits, writes: Sequence[int] | None = None
    ) -> int:
        """Append records; return the offset of the first one. `writes` gives how many records
        each write holds (a produce request's records for a partition are written together and
        never split over segments); None writes every record on its own."""
        first = self.end_offset
        self._extend(timestamps, sizes, None)
        now, start = now_ms(), 0
        for count in writes if writes is not None else itertools.repeat(1, len(timestamps)):
            if count > 0:
                stamps = timestamps[start : start + count]
                self._write(first + start, sum(sizes[start : start + count]), max(stamps), limits, now)
                start += count
        return first

    def append_uniform(self, count: int, first_ts: int, step_ms: int, size: int, limits: SegmentLimits) -> int:
        """Append `count` records of `size` bytes stamped first_ts + i * step_ms, each written on
        its own; segments are filled in closed form, since seeding writes millions of records."""
        timestamps = (
            array("q", range(first_ts, first_ts + count * step_ms, step_ms)) if step_ms else array("q", [first_ts]) * count
        )
        if step_ms < 0:
            return self.append(timestamps, array("l", [size]) * count, limits)
        first = self.end_offset
        self._extend(timestamps, array("l", [size]) * count, True)
        now, done = now_ms(), 0
        while done < count:
            offset, ts = first + done, first_ts + done * step_ms
            active = self.segments[-1]
            if offset == active.base:  # an empty segment takes the first record as it comes
                active.add(size, ts, now)
                done += 1
                continue
            fit = count - done
            if size > 0:
                fit = min(fit, (limits.segment_bytes - active.size) // size)
            if active.first_timestamp < 0:
                fit = fit if now - active.created_ms <= limits.segment_ms else 0
            elif step_ms > 0:
                fit = min(fit, (limits.segment_ms + active.first_timestamp - ts) // step_ms + 1)
            elif ts - active.first_timestamp > limits.segment_ms:
                fit = 0
            if fit <= 0:
                self.segments.append(Segment(offset, now))
                continue
            active.add(fit * size, ts + (fit - 1) * step_ms, now)
            done += fit
        return first

    def _extend(self, timestamps: Sequence[int], sizes: Sequence[int], ascending: bool | None) -> None:
        """`ascending=True` vouches that the new timestamps never decrease (bulk seeding),
        sparing a pass over millions of them."""
        if self.sorted and timestamps:
            prev = self.timestamps[-1] if self.timestamps else timestamps[0]
            self.sorted = prev <= timestamps[0] and (ascending or all(a <= b for a, b in itertools.pairwise(timestamps)))
        self.timestamps.extend(timestamps)
        self.sizes.extend(sizes)

    def _write(self, offset: int, size: int, max_timestamp: int, limits: SegmentLimits, now: int) -> None:
        """UnifiedLog.maybeRoll then LogSegment.append: a non-empty active segment rolls when the
        write would take it past segment.bytes or its time span past segment.ms (no jitter)."""
        active = self.segments[-1]
        if offset > active.base and (
            active.size > limits.segment_bytes - size or active.waited_for_roll(max_timestamp, now) > limits.segment_ms
        ):
            active = Segment(offset, now)
            self.segments.append(active)
        active.add(size, max_timestamp, now)

    def truncate(self, end_offset: int) -> None:
        """Drop every record at or after `end_offset` (unclean leader election): later segments
        go, and the one holding `end_offset` becomes the active segment, cut there."""
        keep = max(0, end_offset - self.base)
        del self.timestamps[keep:]
        del self.sizes[keep:]
        self.log_start = min(self.log_start, self.end_offset)
        self.ahead = {r: min(s, self.end_offset) for r, s in self.ahead.items()}
        while len(self.segments) > 1 and self.segments[-1].base > self.end_offset:
            self.segments.pop()
        active = self.segments[-1]
        kept = slice(active.base - self.base, None)
        active.size = sum(self.sizes[kept])
        active.max_timestamp = max(self.timestamps[kept], default=NO_TIMESTAMP)
        active.first_timestamp = self.timestamps[kept][0] if active.base < self.end_offset else NO_TIMESTAMP
        self.held_from = {r: min(b, active.base) for r, b in self.held_from.items()}

    def advance_start(self, offset: int) -> None:
        """The leader's log start moves up (DeleteRecords); its segments stay until a check."""
        self.log_start = offset
        self.ahead = {r: s for r, s in self.ahead.items() if s > offset}

    # -- replicas --------------------------------------------------------------------------

    def start_of(self, replica: int) -> int:
        return max(self.log_start, self.ahead.get(replica, self.log_start))

    def _first_index(self, replica: int) -> int:
        held = self.held_from.get(replica)
        return 0 if held is None else bisect.bisect_left(self.segments, held, key=lambda s: s.base)

    def size_bytes(self, replica: int) -> int:
        """What DescribeLogDirs reports on the replica's broker: the bytes of the segments it holds."""
        return sum(s.size for s in self.segments[self._first_index(replica) :])

    def segment_bases(self, replica: int) -> tuple[int, ...]:
        return tuple(s.base for s in self.segments[self._first_index(replica) :])

    def _start_segment(self) -> int:
        """Index of the segment holding the log start offset."""
        return max(0, bisect.bisect_right(self.segments, self.log_start, key=lambda s: s.base) - 1)

    def copy_size(self) -> int:
        """What a new replica must copy to be in sync: the segments from the one holding the log
        start on. (A real new replica starts its first segment at the log start offset itself;
        counting that segment whole keeps its size equal to the other replicas' once in sync.)"""
        return sum(s.size for s in self.segments[self._start_segment() :])

    def hold_from_start(self, replica: int) -> None:
        """A new replica finished copying: it holds the segments from the log start on."""
        self.held_from[replica] = self.segments[self._start_segment()].base
        self.ahead.pop(replica, None)

    def forget(self, replica: int) -> None:
        """The replica left the partition and deleted its log."""
        self.held_from.pop(replica, None)
        self.ahead.pop(replica, None)

    def lead(self, replica: int) -> None:
        """`replica` became leader: its own log start is now the partition's."""
        self.advance_start(self.start_of(replica))

    def check_retention(self, replica: int, leader: bool, now: int, rules: RetentionRules) -> None:
        """One retention check on the replica's own log (UnifiedLog.deleteOldSegments): segments
        wholly below its log start, then the oldest while the log stays at or above
        retention.bytes without them, then the oldest whose largest timestamp is more than
        retention.ms before `now`; each scan stops at the first segment it keeps. Only segments
        below the high watermark qualify, never an empty active one; deleting the active segment
        rolls a new empty one at the log end first. The log start becomes the first kept
        segment's base offset."""
        if rules.compact_only:
            return
        start = self.start_of(replica)
        first = self._first_index(replica)
        first = self._delete_while(first, now, lambda k: k + 1 < len(self.segments) and self.segments[k + 1].base <= start)
        if rules.delete and rules.retention_bytes >= 0:
            excess = sum(s.size for s in self.segments[first:]) - rules.retention_bytes
            if excess >= 0:

                def leaves_enough(k: int) -> bool:
                    nonlocal excess
                    if excess - self.segments[k].size < 0:
                        return False
                    excess -= self.segments[k].size
                    return True

                first = self._delete_while(first, now, leaves_enough)
        if rules.delete and rules.retention_ms >= 0:
            first = self._delete_while(first, now, lambda k: now - self.segments[k].largest_timestamp() > rules.retention_ms)
        self.held_from[replica] = self.segments[first].base
        new_start = max(start, self.segments[first].base)
        if leader:
            self.advance_start(new_start)
        elif new_start > self.log_start:
            self.ahead[replica] = new_start

    def _delete_while(self, first: int, now: int, deletable: Callable[[int], bool]) -> int:
        """UnifiedLog.deletableSegments from segment index `first`: the index of the first kept."""
        end = self.end_offset  # also the high watermark: replication is instantaneous
        k = first
        while k < len(self.segments):
            last = k == len(self.segments) - 1
            upper = end if last else self.segments[k + 1].base
            if end < upper or (last and self.segments[k].base == end) or not deletable(k):
                break
            k += 1
        if k == len(self.segments):
            # A log always has a segment: deleting them all rolls a new one at the log end first.
            self.segments.append(Segment(end, now))
        return k

    def discard_unheld(self, replicas: Sequence[int]) -> None:
        """Forget segments (and their records) that no replica holds any more."""
        oldest = min((self.held_from.get(r, self.segments[0].base) for r in replicas), default=self.segments[0].base)
        gone = bisect.bisect_left(self.segments, oldest, key=lambda s: s.base)
        if gone:
            del self.segments[:gone]
            del self.timestamps[: oldest - self.base]
            del self.sizes[: oldest - self.base]
            self.base = oldest

    # -- reading ---------------------------------------------------------------------------

    def offset_for_timestamp(self, target: int, limit: int) -> tuple[int, int] | None:
        """Earliest (offset, timestamp) in [log_start, limit) with timestamp >= target."""
        lo, hi = self.log_start - self.base, min(limit, self.end_offset) - self.base
        if self.sorted:
            i = bisect.bisect_left(self.timestamps, target, lo, hi)
            return (self.base + i, self.timestamps[i]) if i < hi else None
        for i in range(lo, hi):
            if self.timestamps[i] >= target:
                return self.base + i, self.timestamps[i]
        return None

    def max_timestamp(self, replica: int, limit: int) -> tuple[int, int] | None:
        """(offset, timestamp) for ListOffsets MAX_TIMESTAMP on `replica`, as UnifiedLog answers
        it: the segment on disk with the largest timestamp (the first such), and in it the first
        record below `limit` carrying it. Segments still on disk count even below the log start
        (DeleteRecords moves the start; the segment goes only at a retention check), so the
        offset may be below the log start and the record deleted."""
        segments = self.segments[self._first_index(replica) :]
        best = max(segments, key=lambda s: s.max_timestamp)  # max() keeps the first of equals, as maxBy
        if best.max_timestamp < 0:
            return None
        k = segments.index(best)
        upper = segments[k + 1].base if k + 1 < len(segments) else self.end_offset
        lo, hi = best.base - self.base, min(upper, limit) - self.base
        for i in range(lo, hi):
            if self.timestamps[i] == best.max_timestamp:
                return self.base + i, best.max_timestamp
        return None
