"""Retention as a Kafka 4.0 broker applies it: segments, the periodic check, time and size limits,
each replica's own log, and what ListOffsets and DescribeLogDirs report afterwards. The figures are
those seen on a real 3-node Kafka 4.0 cluster (KAFKA_SEMANTICS.md, "reassignment and retention").

The real log: 600 records, one a minute over 10 hours, each sent alone with the value
str(i) + 10001 bytes, in 1 MiB segments. On disk such a one-record batch takes 10074 bytes for
i < 10, 10075 for i < 100 and 10076 after, so 104 records fill a segment (a 105th would pass
1 MiB): segments start at 0, 104, 208, 312, 416, 520, the first holds 1047794 bytes, the next
four 1047904 each and the active one 806080, 6045490 in all.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.protocol.admin import DescribeConfigsRequest, DescribeLogDirsRequest, IncrementalAlterConfigsRequest

from reconciler.testing import TestCluster
from tests.testing_cluster.test_offsets import delete_records, list_offsets

NONE = 0
SET = 0
TOPIC, BROKER = 2, 4
LATEST, EARLIEST = -1, -2
MINUTE, HOUR = 60_000, 3_600_000
MIB = 1 << 20
# The last record's time; the records are older, the checks run a little later.
T_END = 1_700_000_000_000
SEGMENTS = (0, 104, 208, 312, 416, 520)
WHOLE_LOG = 6_045_490
FIRST_SEGMENT, FULL_SEGMENT, ACTIVE_SEGMENT = 1_047_794, 1_047_904, 806_080
# Bytes on disk of value(i), sent alone, by the number of digits of i.
ON_DISK = {1: 10_074, 2: 10_075, 3: 10_076}


def stamp(i: int) -> int:
    return T_END - (599 - i) * MINUTE


def value(i: int) -> bytes:
    return str(i).encode() + b"x" * 10001


def ten_hours(cluster, name, replication_factor=3, configs=None, wire=False):
    """The real cluster's log, produced over the wire or (faster, the same bytes) through the
    cluster's helper; returns (leader, followers)."""
    cluster.create_topic(name, replication_factor=replication_factor, configs={"segment.bytes": str(MIB), **(configs or {})})
    if wire:
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=0)
        try:
            for i in range(600):
                producer.send(name, value(i), partition=0, timestamp_ms=stamp(i))
            producer.flush(timeout=30)
        finally:
            producer.close()
    else:
        for i in range(600):
            cluster.produce(name, 0, [stamp(i)], value_size=ON_DISK[len(str(i))])
    p = cluster.partition(name, 0)
    assert p.high_watermark == 600
    return p.leader, [r for r in p.replicas if r != p.leader]


def check(cluster, name, now_ms):
    """One retention check at `now_ms`: (log start before, after) if the topic's moved, else None.
    Other tests' topics on the module's cluster are checked too, which they do not mind."""
    return cluster.enforce_retention(now_ms=now_ms).get((name, 0))


def set_configs(send, name, **configs):
    ops = [(key.replace("_", "."), SET, value) for key, value in configs.items()]
    [result] = send(IncrementalAlterConfigsRequest(resources=[(TOPIC, name, ops)], validate_only=False), 1).responses
    assert result.error_code == NONE, result.error_message


def earliest(send, cluster, name):
    return list_offsets(send, cluster.partition(name, 0).leader, name, 0, EARLIEST)[1]


def log_dir_sizes(send, cluster, topics):
    """{broker: {(topic, partition): (partition_size, offset_lag)}} from DescribeLogDirs on each broker."""
    T = DescribeLogDirsRequest.DescribableLogDirTopic
    request = DescribeLogDirsRequest(topics=[T(topic=t, partitions=[0]) for t in topics])
    found = {}
    for broker in cluster.broker_ids:
        [result] = send(request, broker).results
        found[broker] = {
            (t.name, p.partition_index): (p.partition_size, p.offset_lag) for t in result.topics for p in t.partitions
        }
    return found


def sizes(send, cluster, name):
    """The partition's size on each broker holding it."""
    return {b: v[(name, 0)][0] for b, v in log_dir_sizes(send, cluster, [name]).items() if (name, 0) in v}


# -- segments ----------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", [True, False], ids=["produced", "helper"])
def test_records_fill_1_mib_segments_as_on_the_real_cluster(cluster, send, unique, wire):
    name = unique("ret")
    ten_hours(cluster, name, wire=wire)
    p = cluster.partition(name, 0)
    assert p.segment_bases == SEGMENTS
    assert p.size_bytes == WHOLE_LOG == FIRST_SEGMENT + 4 * FULL_SEGMENT + ACTIVE_SEGMENT
    assert sizes(send, cluster, name) == {1: WHOLE_LOG, 2: WHOLE_LOG, 3: WHOLE_LOG}


def test_segments_roll_by_segment_ms_measured_from_record_timestamps(cluster, unique):
    name = unique("roll")
    cluster.create_topic(name, configs={"segment.ms": str(HOUR)})
    cluster.produce(name, 0, [stamp(i) for i in range(200)])
    # A segment takes records until one is more than an hour after its first: 61 a minute apart.
    assert cluster.partition(name, 0).segment_bases == (0, 61, 122, 183)


def test_broker_defaults_log_roll_ms_and_log_segment_bytes_apply_through_their_synonyms():
    with TestCluster(brokers=1, broker_configs={"log.roll.ms": str(HOUR), "log.segment.bytes": "1000"}) as c:
        c.create_topic("by-time")
        c.produce("by-time", 0, [stamp(i) for i in range(100)], value_size=1)
        assert c.partition("by-time", 0).segment_bases == (0, 61)
        c.create_topic("by-size")
        c.produce("by-size", 0, [T_END] * 10, value_size=300)  # three fit in 1000 bytes, a fourth not
        assert c.partition("by-size", 0).segment_bases == (0, 3, 6, 9)


def test_a_produce_request_is_one_write_that_never_straddles_segments(cluster, unique):
    name = unique("batch")
    cluster.create_topic(name, configs={"segment.bytes": "1000"})
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, linger_ms=1000, batch_size=1 << 20)
    try:
        futures = [producer.send(name, b"x" * 100, partition=0, timestamp_ms=T_END) for _ in range(20)]
        producer.flush(timeout=30)
        assert {f.get(timeout=10).offset for f in futures} == set(range(20))
    finally:
        producer.close()
    p = cluster.partition(name, 0)
    assert p.segment_bases == (0,) and p.size_bytes > 1000  # one batch, larger than a segment


# -- the check ---------------------------------------------------------------------------------


def test_lowering_retention_deletes_nothing_until_the_check(cluster, send, unique):
    name = unique("ret")
    ten_hours(cluster, name)
    set_configs(send, name, retention_ms=str(5 * HOUR))
    assert earliest(send, cluster, name) == 0
    assert set(sizes(send, cluster, name).values()) == {WHOLE_LOG}

    now = T_END + 5 * MINUTE
    # What a client can read before the check: the first record younger than the limit.
    assert list_offsets(send, cluster.partition(name, 0).leader, name, 0, now - 5 * HOUR)[1] == 304
    assert check(cluster, name, now) == (0, 208)
    # Whole segments only: 208-311 holds the cut and stays.
    assert earliest(send, cluster, name) == 208
    assert cluster.partition(name, 0).segment_bases == SEGMENTS[2:]
    remaining = WHOLE_LOG - FIRST_SEGMENT - FULL_SEGMENT
    assert remaining == 3_949_792
    assert sizes(send, cluster, name) == {1: remaining, 2: remaining, 3: remaining}
    # A time before the log start finds the log start.
    assert list_offsets(send, cluster.partition(name, 0).leader, name, 0, stamp(0))[1] == 208
    assert check(cluster, name, now) is None


def test_one_fresh_record_keeps_its_segment_and_shields_every_later_one(cluster, send, unique):
    name = unique("ret")
    cluster.create_topic(name, configs={"segment.bytes": str(MIB), "retention.ms": str(5 * HOUR)})
    stamps = [stamp(i) for i in range(600)]
    stamps[150] = T_END  # in the second segment, 104-207
    cluster.produce(name, 0, stamps, value_size=ON_DISK[3])
    assert cluster.partition(name, 0).segment_bases == SEGMENTS
    cluster.enforce_retention(now_ms=T_END + 5 * MINUTE)
    assert earliest(send, cluster, name) == 104
    # Hours later every other segment is past retention, but the scan stops at 104 still.
    cluster.enforce_retention(now_ms=T_END + 4 * HOUR)
    assert earliest(send, cluster, name) == 104


def test_the_active_segment_goes_too_when_past_retention(cluster, send, unique):
    name = unique("ret")
    leader, _ = ten_hours(cluster, name, configs={"retention.ms": str(5 * HOUR)})
    cluster.enforce_retention(now_ms=T_END + 6 * HOUR)
    assert list_offsets(send, leader, name, 0, EARLIEST)[1] == list_offsets(send, leader, name, 0, LATEST)[1] == 600
    assert cluster.partition(name, 0).segment_bases == (600,)
    assert sizes(send, cluster, name) == {1: 0, 2: 0, 3: 0}
    # The empty active segment is never deleted; new records go into it.
    cluster.enforce_retention(now_ms=T_END + 60 * HOUR)
    cluster.produce(name, 0, [T_END + 6 * HOUR], value_size=500)
    assert cluster.partition(name, 0).segment_bases == (600,)
    assert sizes(send, cluster, name) == {1: 500, 2: 500, 3: 500}


@pytest.mark.parametrize("key", ["retention.ms", "retention.bytes"])
def test_zero_deletes_every_segment(cluster, send, unique, key):
    name = unique("ret")
    ten_hours(cluster, name)
    set_configs(send, name, **{key.replace(".", "_"): "0"})
    assert check(cluster, name, T_END + 1) == (0, 600)
    assert cluster.partition(name, 0).segment_bases == (600,)
    assert sizes(send, cluster, name) == {1: 0, 2: 0, 3: 0}


def test_minus_one_keeps_everything(cluster, send, unique):
    name = unique("ret")
    ten_hours(cluster, name, configs={"retention.ms": "-1", "retention.bytes": "-1"})
    assert check(cluster, name, T_END + 1000 * HOUR) is None
    assert earliest(send, cluster, name) == 0


def test_size_deletes_oldest_segments_while_the_log_stays_at_the_limit(cluster, send, unique):
    name = unique("ret")
    ten_hours(cluster, name)
    set_configs(send, name, retention_bytes="3000000")
    cluster.enforce_retention(now_ms=T_END + 5 * MINUTE)
    # 6045490 -> 3949792: a third segment would leave 2901888, below the limit.
    assert earliest(send, cluster, name) == 208
    assert sizes(send, cluster, name) == {1: 3_949_792, 2: 3_949_792, 3: 3_949_792}
    assert 3_949_792 - FULL_SEGMENT == 2_901_888
    cluster.enforce_retention(now_ms=T_END + 10 * MINUTE)
    assert earliest(send, cluster, name) == 208


def test_compacted_logs_keep_their_start_until_switched_to_delete(cluster, send, unique):
    name = unique("ret")
    ten_hours(cluster, name, configs={"cleanup.policy": "compact", "retention.ms": str(HOUR)})
    for minutes in (5, 10, 15):
        cluster.enforce_retention(now_ms=T_END + minutes * MINUTE)
    assert earliest(send, cluster, name) == 0
    set_configs(send, name, cleanup_policy="delete")
    assert earliest(send, cluster, name) == 0
    cluster.enforce_retention(now_ms=T_END + 20 * MINUTE)
    # The active segment 520-599 stays: its newest record is less than an hour old.
    assert earliest(send, cluster, name) == 520


def test_delete_records_moves_the_start_at_once_and_frees_whole_segments_at_the_check(cluster, send, unique):
    name = unique("ret")
    leader, _ = ten_hours(cluster, name)
    assert delete_records(send, leader, name, 0, 300) == (NONE, 300)
    assert earliest(send, cluster, name) == 300
    assert set(sizes(send, cluster, name).values()) == {WHOLE_LOG}  # the segments are still on disk
    assert check(cluster, name, T_END + 5 * MINUTE) is None  # retention.ms is 7 days
    assert earliest(send, cluster, name) == 300
    assert cluster.partition(name, 0).segment_bases == SEGMENTS[2:]  # 208-311 holds offset 300
    assert set(sizes(send, cluster, name).values()) == {WHOLE_LOG - FIRST_SEGMENT - FULL_SEGMENT}


# -- replicas ----------------------------------------------------------------------------------


def test_each_replica_applies_retention_to_its_own_log():
    with TestCluster(brokers=2) as c, _sender(c) as send:
        leader, [follower] = ten_hours(c, "orders", replication_factor=2, configs={"retention.ms": str(5 * HOUR)})
        c.enforce_retention(now_ms=T_END + 5 * MINUTE)
        assert earliest(send, c, "orders") == 208
        # The follower restarts and its first check comes hours before the leader's next one.
        c.stop_broker(follower)
        c.start_broker(follower)
        assert c.enforce_retention(now_ms=T_END + 6 * HOUR, brokers=[follower]) == {}
        assert earliest(send, c, "orders") == 208
        assert sizes(send, c, "orders") == {leader: 3_949_792, follower: 0}
        # ListOffsets earliest is the leader's: it jumps with leadership.
        c.move_leader("orders", 0, follower)
        assert earliest(send, c, "orders") == 600
        assert c.enforce_retention(now_ms=T_END + 6 * HOUR, brokers=[leader]) == {}
        assert sizes(send, c, "orders") == {leader: 0, follower: 0}


def test_a_stopped_broker_runs_no_check():
    with TestCluster(brokers=2) as c, _sender(c) as send:
        leader, [follower] = ten_hours(c, "orders", replication_factor=2, configs={"retention.ms": str(5 * HOUR)})
        c.stop_broker(follower)
        c.enforce_retention(now_ms=T_END + 5 * MINUTE)
        c.start_broker(follower)
        # It fetched the new log start on its return, but still holds the segments below it.
        assert sizes(send, c, "orders") == {leader: 3_949_792, follower: WHOLE_LOG}
        c.move_leader("orders", 0, follower)
        assert earliest(send, c, "orders") == 208
        c.enforce_retention(now_ms=T_END + 5 * MINUTE)
        assert sizes(send, c, "orders") == {leader: 3_949_792, follower: 3_949_792}


def test_describe_log_dirs_leaves_out_unknown_topics_and_reports_no_lag(cluster, send, unique):
    name = unique("ret")
    cluster.create_topic(name, replication_factor=3)
    found = log_dir_sizes(send, cluster, [name, unique("missing")])
    assert found == {b: {(name, 0): (0, 0)} for b in (1, 2, 3)}


# -- broker configs ----------------------------------------------------------------------------


def test_the_check_interval_is_a_broker_config_with_kafkas_default(send):
    request = DescribeConfigsRequest(
        resources=[(BROKER, "1", ["log.retention.check.interval.ms", "log.initial.task.delay.ms"])],
        include_synonyms=False,
        include_documentation=False,
    )
    [result] = send(request, 1).results
    assert {c.name: c.value for c in result.configs} == {
        "log.retention.check.interval.ms": "300000",
        "log.initial.task.delay.ms": "30000",
    }


def test_background_checks_follow_the_broker_configs():
    configs = {"log.initial.task.delay.ms": "0", "log.retention.check.interval.ms": "50"}
    with TestCluster(brokers=1, broker_configs=configs, retention_checks=True) as c:
        c.create_topic("old", configs={"retention.ms": str(HOUR)})
        now = int(time.time() * 1000)
        c.produce("old", 0, [now - 2 * HOUR] * 3)
        deadline = time.monotonic() + 10
        while c.partition("old", 0).log_start_offset != 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert c.partition("old", 0).log_start_offset == 3


def test_without_background_checks_nothing_is_deleted_on_its_own():
    with TestCluster(brokers=1, broker_configs={"log.initial.task.delay.ms": "0", "log.retention.check.interval.ms": "50"}) as c:
        c.create_topic("old", configs={"retention.ms": str(HOUR)})
        c.produce("old", 0, [int(time.time() * 1000) - 2 * HOUR] * 3)
        time.sleep(0.2)
        assert c.partition("old", 0).log_start_offset == 0


@contextmanager
def _sender(cluster):
    """send(request, broker) through a fresh admin client, for tests with their own cluster."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=10000)
    try:
        yield lambda request, node: admin._manager.run(admin._manager.send, request, node)
    finally:
        admin.close()
