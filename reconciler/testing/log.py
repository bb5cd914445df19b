"""One partition's log as the test cluster keeps it: offsets, record timestamps and sizes,
and the leader-epoch history.

Only what the wire protocol can observe is stored (no record payloads), in compact arrays,
because benchmarks build 100,000 partitions in one process.
"""
from __future__ import annotations

import bisect
import itertools
from array import array

NO_TIMESTAMP = -1


class EpochHistory:
    """Kafka's LeaderEpochFileCache: (epoch, start offset) entries, both strictly increasing.

    The method bodies follow the Java class closely, because OffsetForLeaderEpoch answers and
    the data-loss checks built on them depend on its exact corner cases.
    """

    __slots__ = ("entries",)

    def __init__(self, entries=()):
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


class PartitionLog:
    """Offsets [log_start, end) with one timestamp and one byte size per retained record.

    `base` is the offset of the first array element; it trails `log_start` until the arrays are
    trimmed, exactly like Kafka keeps deleted records on disk until a segment can go.
    """

    __slots__ = ("base", "log_start", "sizes", "sorted", "timestamps")

    def __init__(self):
        self.log_start = 0
        self.base = 0
        self.timestamps = array("q")
        self.sizes = array("l")
        # True while timestamps never decrease, which allows a binary search.
        self.sorted = True

    @property
    def end_offset(self) -> int:
        return self.base + len(self.timestamps)

    def append(self, timestamps, sizes, ascending: bool | None = None) -> int:
        """Append records; return the offset of the first one. `ascending=True` vouches that
        the new timestamps never decrease (bulk seeding), sparing a pass over millions of them."""
        first = self.end_offset
        if self.sorted and timestamps:
            prev = self.timestamps[-1] if self.timestamps else timestamps[0]
            self.sorted = prev <= timestamps[0] and (ascending or all(
                a <= b for a, b in itertools.pairwise(timestamps)))
        self.timestamps.extend(timestamps)
        self.sizes.extend(sizes)
        return first

    def truncate(self, end_offset: int) -> None:
        """Drop every record at or after `end_offset` (unclean leader election)."""
        keep = max(0, end_offset - self.base)
        del self.timestamps[keep:]
        del self.sizes[keep:]
        self.log_start = min(self.log_start, self.end_offset)

    def advance_start(self, offset: int) -> None:
        self.log_start = offset
        drop = offset - self.base
        if drop > 0:
            del self.timestamps[:drop]
            del self.sizes[:drop]
            self.base = offset

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

    def max_timestamp(self, limit: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record carrying the largest timestamp."""
        lo, hi = self.log_start - self.base, min(limit, self.end_offset) - self.base
        if lo >= hi:
            return None
        window = self.timestamps[lo:hi]
        best = max(window)
        return self.base + lo + window.index(best), best

    def size_bytes(self) -> int:
        return sum(self.sizes[self.log_start - self.base:])
