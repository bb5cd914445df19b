"""The capacity estimates on plain data: ingest per partition (by time, by growth; unknown is never
0), what each kind of action adds per broker, and the per-broker table."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from reconciler.models.observed import Broker, LogDirCapacity
from reconciler.models.plan import AlterConfigs, CreateTopic
from reconciler.plan import capacity
from reconciler.plan.capacity import BY_GROWTH, BY_TIME, DAY_MS, ingest_by_growth, ingest_by_time, ingest_lookup
from reconciler.plan.planner import plan
from reconciler.units import epoch_ms
from tests.factories import desired, have, observed, only, partition, want

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)
NOW_MS = epoch_ms(NOW)
GIB = 1 << 30


def test_ingest_by_time_is_the_last_days_records_at_the_partitions_bytes_per_record():
    # 1,000 records of 1,000 bytes; 240 of them in the last day.
    p = partition(0, log_start=0, hw=1000, size_bytes=1_000_000, offsets_by_timestamp={ingest_lookup(NOW_MS): 760})
    assert ingest_by_time(p, NOW_MS) == capacity.Ingest(240_000, BY_TIME)


def test_no_recent_record_is_0_and_a_missing_lookup_or_size_is_unknown():
    quiet = partition(0, hw=1000, size_bytes=10**6, offsets_by_timestamp={ingest_lookup(NOW_MS): -1})
    assert ingest_by_time(quiet, NOW_MS).bytes_per_day == 0
    not_read = partition(0, hw=1000, size_bytes=10**6)
    assert ingest_by_time(not_read, NOW_MS) == capacity.Ingest(None, "unknown: its offsets of the last day were not read")
    unsized = partition(0, hw=1000, offsets_by_timestamp={ingest_lookup(NOW_MS): 900})
    assert ingest_by_time(unsized, NOW_MS) == capacity.Ingest(None, "unknown: its size on disk was not read")
    offline = partition(0, hw=-1, log_start=-1, leader=-1)
    assert ingest_by_time(offline, NOW_MS).bytes_per_day is None


def test_ingest_by_growth_between_two_observations():
    earlier = partition(0, hw=400, size_bytes=400_000)
    now = partition(0, hw=1000, size_bytes=1_000_000)
    assert ingest_by_growth(now, earlier, 2 * DAY_MS) == capacity.Ingest(300_000, BY_GROWTH)
    assert ingest_by_growth(earlier, now, DAY_MS).bytes_per_day is None  # out of order


def _raised(configs_before: dict[str, str], configs_after: dict[str, str], lookup_offset: int = 760):
    parts = [
        partition(i, hw=1000, size_bytes=1_000_000, replicas=(1, 2), offsets_by_timestamp={ingest_lookup(NOW_MS): lookup_offset})
        for i in range(2)
    ]
    seen = observed(have("t", partitions=2, replication_factor=2, set_on_topic=configs_before)).model_copy(
        update={"taken_at": NOW}
    )
    seen = seen.model_copy(update={"topics": {"t": seen.topics["t"].model_copy(update={"partitions": parts})}})
    return plan(desired(want("t", partitions=2, replication_factor=2, configs=configs_after)), seen)


def test_a_raised_time_limit_adds_the_rate_times_the_added_days_on_every_replica():
    made = _raised({"retention.ms": str(DAY_MS)}, {"retention.ms": str(3 * DAY_MS)})
    disk = only(made.actions, AlterConfigs).disk
    assert disk is not None and disk.bytes_per_day == 480_000
    assert disk.per_broker == {1: 2 * 480_000, 2: 2 * 480_000} and disk.bytes == 4 * 480_000


def test_a_size_limit_caps_what_a_raised_time_limit_adds():
    made = _raised(
        {"retention.ms": str(DAY_MS), "retention.bytes": "300000"},
        {"retention.ms": str(30 * DAY_MS), "retention.bytes": "300000"},
    )
    disk = only(made.actions, AlterConfigs).disk
    # 240 KB a day per partition: under 1d the log holds 240 KB, under 30d the size limit's 300 KB.
    assert disk is not None and disk.per_broker == {1: 2 * 60_000, 2: 2 * 60_000}


def test_removed_limits_grow_without_bound_and_compaction_is_not_estimated():
    made = _raised({"retention.ms": str(DAY_MS)}, {"retention.ms": "-1"})
    disk = only(made.actions, AlterConfigs).disk
    assert disk is not None and disk.unbounded and disk.bytes is None and disk.bytes_per_day == 480_000
    made = _raised({"retention.ms": str(DAY_MS)}, {"retention.ms": str(DAY_MS), "cleanup.policy": "compact"})
    disk = only(made.actions, AlterConfigs).disk
    assert disk is not None and disk.bytes is None and disk.method.startswith("not estimated")


def test_an_unknown_rate_is_unknown_not_0():
    made = _raised({"retention.ms": str(DAY_MS)}, {"retention.ms": str(3 * DAY_MS)}, lookup_offset=760)
    known = only(made.actions, AlterConfigs).disk
    assert known is not None and known.bytes is not None
    seen = observed(have("t", partitions=1, replication_factor=1, set_on_topic={"retention.ms": str(DAY_MS)}, size_bytes=10))
    made = plan(desired(want("t", partitions=1, replication_factor=1, configs={"retention.ms": str(3 * DAY_MS)})), seen)
    disk = only(made.actions, AlterConfigs).disk
    assert disk is not None and disk.bytes is None and "unknown" in disk.method


def test_a_new_topics_expected_traffic_times_retention_and_replicas():
    action = CreateTopic(topic="n", partitions=2, replication_factor=3, preconditions={"exists": False})
    disk = capacity.new_topic_estimate(action, 2 * 10**9, 7 * DAY_MS, -1, [1, 2, 3])
    assert disk.bytes == 2 * 10**9 * 7 * 3 and disk.per_broker == {1: 14 * 10**9, 2: 14 * 10**9, 3: 14 * 10**9}
    capped = capacity.new_topic_estimate(action, 2 * 10**9, 7 * DAY_MS, 10**9, [1, 2, 3])
    assert capped.bytes == 10**9 * 2 * 3
    assert capacity.new_topic_estimate(action, 10, -1, -1, [1]).unbounded


def test_the_table_adds_the_known_figures_and_marks_the_unknown():
    seen = observed(have("t", partitions=1, replication_factor=1, set_on_topic={"retention.ms": str(DAY_MS)}, size_bytes=10))
    seen = seen.model_copy(
        update={
            "log_dirs": {1: [LogDirCapacity(log_dir="/data", total_bytes=GIB, usable_bytes=GIB // 2)]},
            "capacity_unknown": {2: "DescribeLogDirs v3 has no capacity figures (a broker before Kafka 3.3, KIP-827)"},
        }
    )
    made = plan(desired(want("t", partitions=1, replication_factor=1, configs={"retention.ms": str(3 * DAY_MS)})), seen)
    rows = {r.broker: r for r in made.capacity}
    assert rows[1].used_bytes == GIB // 2 and rows[1].total_bytes == GIB and rows[1].added_unknown
    assert rows[1].projected_bytes is None and rows[2].unknown is not None
    assert [d.code for d in made.diagnostics] == ["capacity-unknown"]


@pytest.mark.parametrize("share", [0.25])
def test_projected_share(share):
    seen = observed(have("t", partitions=1, replication_factor=1))
    seen = seen.model_copy(update={"log_dirs": {1: [LogDirCapacity(log_dir="/d", total_bytes=100, usable_bytes=75)]}})
    made = plan(desired(want("t", partitions=1, replication_factor=1)), seen)
    assert made.capacity[0].projected_share == share


def test_a_new_topics_declared_traffic_is_estimated_in_the_plan():
    seen = observed(have("t", partitions=1, replication_factor=1)).model_copy(
        update={"brokers": [Broker(node_id=b, host="h", port=9092) for b in (1, 2, 3)]}
    )
    new = want(
        "n", partitions=3, replication_factor=3, configs={"retention.ms": str(2 * DAY_MS)}, expected_bytes_per_day=3 * 10**9
    )
    made = plan(desired(want("t", partitions=1, replication_factor=1), new), seen)
    disk = only(made.actions, CreateTopic).disk
    assert disk is not None and disk.bytes == 3 * 10**9 * 2 * 3
    assert disk.method.startswith("expected_bytes_per_day 2.8 GiB x retention")
