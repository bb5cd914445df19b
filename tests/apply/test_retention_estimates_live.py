"""A retention cut's estimate against what the test cluster's retention check then deletes.

Each test seeds a topic whose small segment.bytes gives each partition several segments, plans a
lower limit through the CLI, applies it, runs one retention check, and compares per partition
the plan's "deleted (up to)" with the log start's move and the bytes DescribeLogDirs lost.

The clock: the plan measures a time limit back from its observed_at (the instant it asks
ListOffsets for offsets by time), so the check runs at exactly that instant
(`enforce_retention(now_ms=observed_at)`). A broker's check runs later (up to
log.retention.check.interval.ms after the change is applied), by when more records have aged
past the limit: the estimate bounds what goes as of the plan's time, not of the later check.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from reconciler.testing import PartitionView, TestCluster
from reconciler.units import epoch_ms
from tests.apply.test_apply_live import HOUR, Repo, outcome

DAY = 24 * HOUR
MINUTE = 60_000
SEGMENT_BYTES = 65_536
# Per partition: a record size, so that each partition's segments hold a different number of records.
VALUE_SIZES = (1_000, 1_500, 700)
RECORDS = 500
STEP_MS = 10 * MINUTE  # 500 records over 83 hours


@dataclass(frozen=True)
class Figures:
    """One partition: what the plan estimated and what the retention check deleted."""

    partition: int
    estimated_records: int
    deleted_records: int
    estimated_bytes: int
    deleted_bytes: int
    segment_records: int  # records in the segment holding the estimate's cut (the one the check keeps)
    segment_bytes: int
    segment_base: int  # that segment's base offset
    size_after: int  # the partition's bytes after the check


def observed_ms(plan: dict) -> int:
    """The plan's observed_at in epoch milliseconds (Python 3.10's fromisoformat does not read "Z")."""
    return epoch_ms(datetime.fromisoformat(plan["observed_at"].replace("Z", "+00:00")))


def cut_one_partition(repo: Repo, cluster: TestCluster) -> tuple[dict, PartitionView, PartitionView]:
    """Plan and apply a one-partition topic's retention cut, then run the brokers' retention check
    at the plan's time: the partition's estimate, and the partition before and after."""
    code, plan, output = repo.plan()
    assert code == 2, output
    [expiry] = plan["actions"][0]["retention"]["partitions"]
    before = cluster.partition("events", 0)
    assert repo.apply()[0] == 0
    cluster.enforce_retention(now_ms=observed_ms(plan))
    return expiry, before, cluster.partition("events", 0)


def seed(cluster, configs: dict[str, str], now_ms: int, sizes=VALUE_SIZES) -> None:
    """RECORDS records per partition, one every STEP_MS, the newest STEP_MS before `now_ms`."""
    cluster.create_topic(
        "events", partitions=len(sizes), replication_factor=3, configs={"segment.bytes": str(SEGMENT_BYTES), **configs}
    )
    for p, size in enumerate(sizes):
        cluster.produce_many({("events", p): RECORDS}, timestamp_ms=now_ms - RECORDS * STEP_MS, step_ms=STEP_MS, value_size=size)


def manifest(configs: str) -> str:
    return f"kind: Topic\nname: events\npartitions: 3\nconfigs: {{segment.bytes: {SEGMENT_BYTES}, {configs}}}\n"


def plan_apply_and_enforce(tmp_path, cluster, configs: str) -> tuple[dict, list[Figures]]:
    """Plan and apply `configs`, then run one retention check at the plan's observed_at."""
    repo = Repo(tmp_path, cluster, manifest(configs))
    code, plan, output = repo.plan()
    assert code == 2, output
    [action] = plan["actions"]
    assert action["kind"] == "alter_configs" and action["destructive"] is True
    partitions = len(action["retention"]["partitions"])
    before = [cluster.partition("events", p) for p in range(partitions)]
    code, result = repo.apply()
    assert code == 0 and outcome(result, "alter_configs", "events")["status"] == "applied", result
    # Applying the change deletes nothing: only the broker's next retention check does.
    assert [cluster.partition("events", p).log_start_offset for p in range(partitions)] == [b.log_start_offset for b in before]
    cluster.enforce_retention(now_ms=observed_ms(plan))
    figures = []
    for expiry, old in zip(action["retention"]["partitions"], before, strict=True):
        new = cluster.partition("events", expiry["partition"])
        assert expiry["log_start_offset"] == old.log_start_offset and expiry["high_watermark"] == old.high_watermark
        keep = expiry["keep_from_offset"]
        # The segment holding the estimate's cut: the check keeps it unless it keeps less than the estimate.
        index = max(i for i, b in enumerate(old.segment_bases) if b <= min(keep, old.log_end_offset - 1))
        bases = (*old.segment_bases, old.log_end_offset)
        seg_records = bases[index + 1] - bases[index]
        figures.append(
            Figures(
                expiry["partition"],
                keep - expiry["log_start_offset"],
                new.log_start_offset - old.log_start_offset,
                expiry["bytes_to_delete"],
                old.size_bytes - new.size_bytes,
                seg_records,
                seg_records * VALUE_SIZES[expiry["partition"]],
                bases[index],
                new.size_bytes,
            )
        )
    return plan, figures


def test_a_time_cut_deletes_at_most_the_estimate_and_within_one_segment_of_it(tmp_path, test_cluster):
    now_ms = int(time.time() * 1000)
    seed(test_cluster, {"retention.ms": str(30 * DAY)}, now_ms)
    assert [len(test_cluster.partition("events", p).segment_bases) for p in range(3)] == [8, 12, 6]
    plan, figures = plan_apply_and_enforce(tmp_path, test_cluster, "retention.ms: 1d")
    cut_ms = observed_ms(plan) - DAY
    for f in figures:
        # ListOffsets at observed_at - 1d: the first record stamped at or after it, from the seeding.
        first_young = -(-(cut_ms - (now_ms - RECORDS * STEP_MS)) // STEP_MS)
        assert f.estimated_records == first_young
        # Kafka deletes the segments before the one holding that record, whose newest records are older.
        assert f.deleted_records == f.segment_base
        assert f.deleted_records <= f.estimated_records, f
        assert f.estimated_records - f.deleted_records < f.segment_records, f
        # Bytes follow the records (every record of a partition has the same size here).
        assert f.deleted_bytes <= f.estimated_bytes, f
        assert f.estimated_bytes - f.deleted_bytes < f.segment_bytes, f
    print_figures("time cut, retention.ms 30d -> 1d", figures)


def test_a_size_cut_deletes_at_most_the_estimated_bytes_and_within_one_segment_of_them(tmp_path, test_cluster):
    now_ms = int(time.time() * 1000)
    seed(test_cluster, {"retention.ms": str(30 * DAY)}, now_ms)
    limit = 200_000
    plan, figures = plan_apply_and_enforce(tmp_path, test_cluster, f"retention.ms: 30d, retention.bytes: {limit}")
    assert plan["actions"][0]["retention"]["retention_bytes"] == limit
    for f in figures:
        size = RECORDS * VALUE_SIZES[f.partition]
        assert f.estimated_bytes == size - limit
        # The brokers delete whole segments while the log keeps at least the limit: never more bytes
        # than the excess, and less by under one segment (the next one would take the log below it).
        assert f.deleted_bytes <= f.estimated_bytes, f
        assert f.estimated_bytes - f.deleted_bytes < f.segment_bytes, f
        # Kafka's rule, seen from outside: the first segment kept (the one holding the estimate's
        # cut, with records of one size) would take the log below the limit.
        assert f.deleted_records == f.segment_base and f.size_after >= limit > f.size_after - f.segment_bytes
        # The record count is the excess in proportion (rounded up): with records of one size, as
        # here, it is an upper bound too, within one segment's records.
        assert f.estimated_records == -(-RECORDS * (size - limit) // size)
        assert f.deleted_records <= f.estimated_records, f
        assert f.estimated_records - f.deleted_records <= f.segment_records, f
    print_figures(f"size cut, retention.bytes -1 -> {limit}", figures)


def test_a_size_cut_counts_records_in_proportion_so_uneven_records_can_exceed_the_count(tmp_path, test_cluster):
    """DescribeLogDirs gives a partition's bytes, not where they lie: the record count of a size
    cut assumes records of even size. Old small records before new large ones: the bytes are
    still an upper bound, the record count is not."""
    now_ms = int(time.time() * 1000)
    test_cluster.create_topic(
        "events", partitions=1, replication_factor=3, configs={"segment.bytes": str(SEGMENT_BYTES), "retention.ms": str(30 * DAY)}
    )
    test_cluster.produce_many({("events", 0): 400}, timestamp_ms=now_ms - 500 * MINUTE, step_ms=MINUTE, value_size=100)
    test_cluster.produce_many({("events", 0): 100}, timestamp_ms=now_ms - 100 * MINUTE, step_ms=MINUTE, value_size=5_000)
    repo = Repo(
        tmp_path, test_cluster, manifest("retention.ms: 30d, retention.bytes: 400000").replace("partitions: 3", "partitions: 1")
    )
    expiry, before, after = cut_one_partition(repo, test_cluster)
    size, excess = 400 * 100 + 100 * 5_000, 540_000 - 400_000
    assert expiry["bytes_to_delete"] == excess and before.size_bytes - after.size_bytes <= excess
    assert excess - (before.size_bytes - after.size_bytes) < SEGMENT_BYTES
    assert expiry["keep_from_offset"] == -(-500 * excess // size)  # 130 records: 26% of the bytes
    # Every small record and the first large ones go: more records than the proportional count.
    assert after.log_start_offset > expiry["keep_from_offset"]
    print(
        f"uneven sizes: estimated {expiry['keep_from_offset']} records / {excess} bytes, "
        f"deleted {after.log_start_offset} records / {before.size_bytes - after.size_bytes} bytes"
    )


def test_switching_compact_to_delete_is_destructive_and_estimated(tmp_path, test_cluster):
    now_ms = int(time.time() * 1000)
    seed(test_cluster, {"cleanup.policy": "compact", "retention.ms": str(DAY)}, now_ms)
    # A compacted topic ignores retention.ms: a check deletes nothing.
    assert test_cluster.enforce_retention(now_ms=now_ms) == {}
    plan, figures = plan_apply_and_enforce(tmp_path, test_cluster, "cleanup.policy: delete, retention.ms: 1d")
    cut = plan["actions"][0]["retention"]
    assert cut["effects"] == ["records older than 1d are deleted: retention turns on, cleanup.policy compact -> delete"]
    assert cut["retention_ms"] == DAY and plan["summary"]["retention_cuts"] == 1
    for f in figures:
        assert f.deleted_records <= f.estimated_records and f.estimated_records - f.deleted_records < f.segment_records
    print_figures("compact -> delete, retention.ms 1d", figures)


def test_switching_delete_to_compact_is_destructive_without_a_count(tmp_path, test_cluster):
    now_ms = int(time.time() * 1000)
    seed(test_cluster, {"cleanup.policy": "delete", "retention.ms": str(30 * DAY)}, now_ms)
    repo = Repo(tmp_path, test_cluster, manifest("cleanup.policy: compact, retention.ms: 30d"))
    code, plan, output = repo.plan()
    assert code == 2, output
    [action] = plan["actions"]
    assert action["kind"] == "alter_configs" and action["destructive"] is True
    cut = action["retention"]
    assert cut["effects"] == [
        "compaction turns on, cleanup.policy delete -> compact: superseded values (older "
        "records whose key is written again) and records without a key are removed"
    ]
    assert cut["retention_ms"] is None and cut["retention_bytes"] is None and cut["partitions"] == []
    assert plan["summary"]["retention_cuts"] == 1
    text = repo.run("plan", str(repo.dir / "manifests"), "--cluster", "lab").output
    assert "DESTRUCTIVE" in text and "compaction turns on" in text
    code, result = repo.apply()
    assert code == 0 and outcome(result, "alter_configs", "events")["status"] == "applied", result
    assert test_cluster.topic_configs("events")["cleanup.policy"] == "compact"
    # Retention no longer applies to a compact-only topic (what compaction removes is not modelled).
    assert test_cluster.enforce_retention(now_ms=now_ms + 365 * DAY) == {}


def print_figures(title: str, figures: list[Figures]) -> None:
    """The figures behind the table in docs/retention.md (`pytest -s` shows them)."""
    print(f"\n{title}")
    for f in figures:
        print(
            f"  partition {f.partition}: estimated {f.estimated_records} records / {f.estimated_bytes} bytes, "
            f"deleted {f.deleted_records} / {f.deleted_bytes}; segment {f.segment_records} records"
        )


def test_a_time_cut_counts_bytes_in_proportion_so_uneven_records_can_exceed_them(tmp_path, test_cluster):
    """The mirror case: a time cut's record count is the upper bound (ListOffsets by time), its bytes
    are the partition's bytes in proportion. Old large records before new small ones: more bytes go."""
    now_ms = int(time.time() * 1000)
    test_cluster.create_topic(
        "events", partitions=1, replication_factor=3, configs={"segment.bytes": str(SEGMENT_BYTES), "retention.ms": str(30 * DAY)}
    )
    test_cluster.produce_many({("events", 0): 100}, timestamp_ms=now_ms - 50 * HOUR, step_ms=6 * MINUTE, value_size=5_000)
    # Half a step off the hour, so that the cut 30 h before the plan falls between two records.
    test_cluster.produce_many(
        {("events", 0): 400}, timestamp_ms=now_ms - 40 * HOUR + 3 * MINUTE, step_ms=6 * MINUTE, value_size=100
    )
    repo = Repo(tmp_path, test_cluster, manifest("retention.ms: 30h").replace("partitions: 3", "partitions: 1"))
    expiry, before, after = cut_one_partition(repo, test_cluster)
    deleted_bytes = before.size_bytes - after.size_bytes
    assert expiry["keep_from_offset"] == 200 and after.log_start_offset <= 200  # records: an upper bound
    assert expiry["bytes_to_delete"] == 540_000 * 200 // 500
    assert deleted_bytes > expiry["bytes_to_delete"]  # bytes: in proportion only
    print(
        f"uneven sizes, time cut: estimated {expiry['keep_from_offset']} records / {expiry['bytes_to_delete']} "
        f"bytes, deleted {after.log_start_offset} records / {deleted_bytes} bytes"
    )
