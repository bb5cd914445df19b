"""The brokers' metadata lags behind the controller (views.py), as on a real Kafka 4.0 cluster:
KAFKA_SEMANTICS.md "how soon a write is visible" (configs 0.33-0.47 s, a removal-only
reassignment's Metadata 100-470 ms after the in-progress list empties, a cancel's revert alike)."""

from __future__ import annotations

import time
import uuid

import pytest
from kafka import KafkaAdminClient
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    CreatePartitionsRequest,
    DeleteTopicsRequest,
    DescribeConfigsRequest,
    IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.metadata import MetadataRequest

from reconciler.testing import TestCluster

TOPIC, BROKER = 2, 4
SET = 0
DELAYS = {1: 0.2, 2: 0.4, 3: 0.6}


@pytest.fixture
def lagging():
    with (
        TestCluster(brokers=3, metadata_propagation_delay=DELAYS) as c,
        KafkaAdminClient(bootstrap_servers=c.bootstrap_servers) as a,
    ):
        yield c, lambda request, node: a._manager.run(a._manager.send, request, node)


def replicas(send, broker, name):
    response = send(MetadataRequest[8](topics=[(name,)], allow_auto_topic_creation=False), broker)
    [t] = response.topics
    return {p[1]: list(p[4]) for p in t[3]} if t[0] == 0 else None


def topic_value(send, broker, name, key):
    request = DescribeConfigsRequest(resources=[(TOPIC, name, [key])], include_synonyms=False, include_documentation=False)
    [result] = send(request, broker).results
    return {c.name: c.value for c in result.configs}.get(key) if not result.error_code else None


def until(check, within=2.0):
    """Seconds until check() holds (asserting it does within `within`)."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < within, "never became visible"
        time.sleep(0.02)
    return time.monotonic() - start


def test_seeded_state_is_visible_everywhere_at_once(lagging):
    cluster, send = lagging
    cluster.create_topic("seeded", partitions=2, replication_factor=2, configs={"retention.ms": "1000"})
    for broker in (1, 2, 3):
        assert replicas(send, broker, "seeded") is not None
        assert topic_value(send, broker, "seeded", "retention.ms") == "1000"


def test_a_config_change_reaches_each_broker_after_its_own_delay(lagging):
    cluster, send = lagging
    cluster.create_topic("t", configs={"retention.ms": "1000"})
    request = IncrementalAlterConfigsRequest(resources=[(TOPIC, "t", [("retention.ms", SET, "2000")])], validate_only=False)
    assert send(request, 1).responses[0].error_code == 0
    assert cluster.topic_configs("t")["retention.ms"] == "2000"  # the controller has it at once
    # The broker that took the write lags too (seen: 0.33-0.47 s on the receiving broker).
    assert topic_value(send, 1, "t", "retention.ms") == "1000"
    waited = {b: until(lambda b=b: topic_value(send, b, "t", "retention.ms") == "2000") for b in (1, 2, 3)}
    assert waited[3] >= 0.6 - waited[1] - waited[2] - 0.05


def test_a_broker_config_lags_on_its_own_broker(lagging):
    cluster, send = lagging
    key = "leader.replication.throttled.rate"
    request = IncrementalAlterConfigsRequest(resources=[(BROKER, "2", [(key, SET, "1024")])], validate_only=False)
    assert send(request, 2).responses[0].error_code == 0
    describe = DescribeConfigsRequest(resources=[(BROKER, "2", [key])], include_synonyms=False, include_documentation=False)
    assert not send(describe, 2).results[0].configs
    assert cluster.dynamic_broker_configs(2) == {key: "1024"}
    until(lambda: bool(send(describe, 2).results[0].configs))


def test_a_removal_only_reassignment_leaves_the_list_before_metadata_shows_it(lagging):
    cluster, send = lagging
    cluster.create_topic("r", partitions=1, replication_factor=3)
    before = replicas(send, 3, "r")[0]
    target = before[:2]
    alter = AlterPartitionReassignmentsRequest(timeout_ms=1000, topics=[("r", [(0, target)])])
    assert send(alter, 1).responses[0][1][0][1] == 0
    listed = send(ListPartitionReassignmentsRequest(timeout_ms=1000, topics=None), 1)
    assert listed.topics == []  # done at once: the list (the controller's) is empty
    assert cluster.replicas("r") == {0: target}
    assert replicas(send, 3, "r") == {0: before}  # broker 3's Metadata still shows the old set
    until(lambda: replicas(send, 3, "r") == {0: target})


def test_a_cancel_revert_reaches_metadata_late(lagging):
    cluster, send = lagging
    cluster.create_topic("c", partitions=1, replication_factor=1)
    cluster.stall_reassignments(True)
    [original] = cluster.replicas("c").values()
    target = [b for b in (1, 2, 3) if b not in original][:1] + original
    cluster.reassign("c", {0: target})
    moving = cluster.replicas("c")[0]
    assert replicas(send, 2, "c") == {0: moving}
    cancel = AlterPartitionReassignmentsRequest(timeout_ms=1000, topics=[("c", [(0, None)])])
    assert send(cancel, 1).responses[0][1][0][1] == 0
    assert cluster.replicas("c") == {0: original}
    assert replicas(send, 2, "c") == {0: moving}
    until(lambda: replicas(send, 2, "c") == {0: original})


def test_new_partitions_and_deletions_show_late(lagging):
    cluster, send = lagging
    cluster.create_topic("p", partitions=1)
    T = CreatePartitionsRequest.CreatePartitionsTopic
    grow = CreatePartitionsRequest(topics=[T(name="p", count=3, assignments=None)], timeout_ms=1000, validate_only=False)
    assert send(grow, 1).results[0].error_code == 0
    assert len(replicas(send, 2, "p")) == 1
    until(lambda: len(replicas(send, 2, "p")) == 3)
    D = DeleteTopicsRequest.DeleteTopicState
    delete = DeleteTopicsRequest(topics=[D(name="p", topic_id=uuid.UUID(int=0))], timeout_ms=1000)
    assert send(delete, 1).responses[0].error_code == 0
    assert "p" not in cluster.topic_names()
    assert replicas(send, 3, "p") is not None
    until(lambda: replicas(send, 3, "p") is None)


def test_a_cluster_without_delays_shows_every_write_at_once():
    with TestCluster(brokers=2, metadata_propagation_delay=0) as c, KafkaAdminClient(bootstrap_servers=c.bootstrap_servers) as a:
        c.create_topic("now")
        send = lambda request, node: a._manager.run(a._manager.send, request, node)  # noqa: E731
        request = IncrementalAlterConfigsRequest(resources=[(TOPIC, "now", [("retention.ms", SET, "5")])], validate_only=False)
        send(request, 1)
        assert topic_value(send, 2, "now", "retention.ms") == "5"
