"""Disk capacity read over real sockets: each broker's log directory figures come in the
DescribeLogDirs requests the read already sends (one per broker, whatever the number of topics),
and a broker that cannot give them (older than Kafka 3.3, a refusal, an error answer, no answer)
is named with its reason once, never given 0."""

from __future__ import annotations

import json

import pytest

from reconciler.app.take_snapshot import unseen
from reconciler.models.observed import ObservedState
from reconciler.plan.capacity import capacity_unknown_line
from reconciler.testing import Acl, TestCluster
from tests.kafka.helpers import api_counts, kafka_of, spec_of

GIB = 1 << 30
LOG_DIR = "/tmp/kafka-logs"  # the test cluster's one log directory per broker
DESCRIBE_LOG_DIRS = 35


def _seed(cluster: TestCluster, topics: int) -> None:
    for i in range(topics):
        cluster.create_topic(f"t{i}", partitions=2, replication_factor=2)
        cluster.produce(f"t{i}", 0, range(1000, 1020), value_size=5_000)


@pytest.mark.parametrize("topics", [2, 40])
def test_capacity_comes_in_the_size_requests_one_per_broker(topics):
    with TestCluster(brokers=3, log_dir_bytes=[GIB, 2 * GIB, 3 * GIB]) as c:
        _seed(c, topics)
        with kafka_of(c) as kafka:
            c.clear_request_log()
            observed = kafka.observe_topics(sizes=True)
        assert api_counts(c)["DescribeLogDirs"] == 3
        assert {b: [(d.log_dir, d.total_bytes, d.used_bytes) for d in dirs] for b, dirs in observed.log_dirs.items()} == {
            b: [(LOG_DIR, b * GIB, c.log_dir_used_bytes(b))] for b in (1, 2, 3)
        }
        assert observed.capacity_unknown == {}
        # The figures survive a snapshot's round trip.
        again = ObservedState.from_file(json.loads(observed.to_json()))
        assert again.log_dirs == observed.log_dirs


def test_a_read_without_sizes_reads_no_capacity():
    with TestCluster(brokers=1) as c:
        c.create_topic("t", partitions=1, replication_factor=1)
        with kafka_of(c) as kafka:
            observed = kafka.observe_topics(["t"])
        assert (observed.log_dirs, observed.capacity_unknown) == ({}, {})
        assert '"log_dirs"' not in observed.to_json()  # older readers' JSON unchanged


def test_a_broker_before_kafka_3_3_is_named_once_with_its_version():
    with TestCluster(brokers=2, max_versions={DESCRIBE_LOG_DIRS: 3}) as c:
        _seed(c, 1)
        with kafka_of(c) as kafka:
            observed = kafka.observe_topics(sizes=True)
        assert observed.log_dirs == {}
        why = "DescribeLogDirs v3 has no capacity figures (a broker before Kafka 3.3, KIP-827)"
        assert observed.capacity_unknown == {1: why, 2: why}
        assert all(p.size_bytes is not None for p in observed.topics["t0"].partitions)  # sizes still read
        assert capacity_unknown_line(observed.capacity_unknown) == (
            f"disk capacity unknown (brokers 1, 2: {why}); usage against capacity is not checked there"
        )
        assert unseen(observed, spec_of(c))[-1] == capacity_unknown_line(observed.capacity_unknown)


def test_an_offline_log_dir_and_an_error_answer_make_that_brokers_capacity_unknown():
    with TestCluster(brokers=3, log_dir_bytes=GIB) as c:
        _seed(c, 1)
        c.set_log_dir_offline(2)
        c.inject_error(DESCRIBE_LOG_DIRS, 7, times=2, broker=3)  # REQUEST_TIMED_OUT, top level, retried once
        with kafka_of(c) as kafka:
            observed = kafka.observe_topics(sizes=True)
        assert list(observed.log_dirs) == [1]
        assert observed.capacity_unknown == {
            2: f"log directory {LOG_DIR}: KAFKA_STORAGE_ERROR",
            3: "DescribeLogDirs answered REQUEST_TIMED_OUT",
        }


def test_without_cluster_describe_capacity_is_unknown_beside_the_refused_sizes():
    with TestCluster(brokers=2, acls=[Acl("ANONYMOUS", "topic", "t", "ALL")]) as c:
        c.create_topic("t", partitions=1, replication_factor=1)
        with kafka_of(c) as kafka:
            observed = kafka.observe_topics(["t"], sizes=True)
        assert observed.sizes_refused == "CLUSTER_AUTHORIZATION_FAILED"
        assert observed.capacity_unknown == dict.fromkeys((1, 2), "DescribeLogDirs answered CLUSTER_AUTHORIZATION_FAILED")
        assert observed.log_dirs == {}
