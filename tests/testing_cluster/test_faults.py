"""Fault switches and the request log, observed through real clients."""

from __future__ import annotations

import socket
import time

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.errors import KafkaTimeoutError, RequestTimedOutError
from kafka.protocol.admin import DeleteRecordsRequest
from kafka.protocol.consumer import ListOffsetsRequest, OffsetForLeaderEpochRequest
from kafka.protocol.metadata import MetadataRequest

from reconciler.testing import TestCluster

NONE, NOT_LEADER, REQUEST_TIMED_OUT, UNKNOWN_LEADER_EPOCH = 0, 6, 7, 75
DELETE_RECORDS, METADATA, LIST_OFFSETS, OFFSET_FOR_LEADER_EPOCH = 21, 3, 2, 23


@pytest.fixture(autouse=True)
def no_faults(cluster):
    yield
    cluster.clear_faults()


def delete_records(send, broker, topic, offset):
    request = DeleteRecordsRequest(topics=[(topic, [(0, offset)])], timeout_ms=5000)
    p = send(request, broker).topics[0].partitions[0]
    return p.error_code, p.low_watermark


def test_injected_error_without_apply_changes_nothing(cluster, send, unique):
    name = unique()
    cluster.create_topic(name)
    cluster.produce(name, 0, [1] * 10)
    leader = cluster.partition(name, 0).leader
    cluster.inject_error(DELETE_RECORDS, REQUEST_TIMED_OUT, times=1)
    assert delete_records(send, leader, name, 5) == (REQUEST_TIMED_OUT, -1)
    assert cluster.partition(name, 0).log_start_offset == 0
    assert delete_records(send, leader, name, 5) == (NONE, 5)  # only once


def test_injected_timeout_with_apply_moves_log_start(cluster, send, unique):
    """Kafka's REQUEST_TIMED_OUT after the leader already moved the log start."""
    name = unique()
    cluster.create_topic(name)
    cluster.produce(name, 0, [1] * 10)
    leader = cluster.partition(name, 0).leader
    cluster.inject_error(DELETE_RECORDS, REQUEST_TIMED_OUT, apply=True)
    assert delete_records(send, leader, name, 6) == (REQUEST_TIMED_OUT, -1)
    assert cluster.partition(name, 0).log_start_offset == 6


def test_injected_error_targets_one_broker_and_sets_throttle(cluster, send, unique):
    name = unique()
    cluster.create_topic(name)
    cluster.inject_error(METADATA, 0, times=1, broker=2, throttle_time_ms=5)
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=name)])
    assert send(request, 1).throttle_time_ms == 0
    response = send(request, 2)
    assert response.throttle_time_ms == 5 and response.topics[0].error_code == NONE


def test_injected_error_fills_every_partition(cluster, send, unique):
    name = unique()
    cluster.create_topic(name, partitions=2, replication_factor=3)
    leader = cluster.partition(name, 0).leader
    cluster.inject_error(LIST_OFFSETS, NOT_LEADER)
    T = ListOffsetsRequest.ListOffsetsTopic
    request = ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=[T(name=name, partitions=[T.ListOffsetsPartition(partition_index=i, timestamp=-1) for i in (0, 1)])],
    )
    partitions = send(request, leader).topics[0].partitions
    assert [(p.error_code, p.offset, p.leader_epoch) for p in partitions] == [(NOT_LEADER, -1, -1)] * 2


def test_delay_slows_one_api_without_blocking_other_brokers(cluster, admin, send, unique):
    # A long delay, so that a slow machine cannot make an undelayed answer look delayed.
    cluster.delay(METADATA, 2.0, times=1, broker=1)
    request = MetadataRequest(topics=[])
    started = time.monotonic()
    send(request, 2)
    assert time.monotonic() - started < 2.0
    started = time.monotonic()
    send(request, 1)
    assert time.monotonic() - started >= 2.0


def test_dropped_answer_times_out_but_the_operation_happened(cluster, unique):
    name = unique()
    cluster.create_topic(name)
    cluster.produce(name, 0, [1] * 10)
    with KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=500) as admin:
        cluster.drop(DELETE_RECORDS, times=1)
        tp = TopicPartition(name, 0)
        with pytest.raises((KafkaTimeoutError, RequestTimedOutError)):
            admin.delete_records({tp: 4})
        assert cluster.partition(name, 0).log_start_offset == 4


def test_move_leader_with_transient_unknown_leader_epoch(cluster, send, unique):
    name = unique()
    cluster.create_topic(name, replication_factor=2)
    p = cluster.partition(name, 0)
    follower = next(r for r in p.replicas if r != p.leader)
    cluster.move_leader(name, 0, to=follower, unknown_epoch_responses=2)
    T = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
    request = OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[T(topic=name, partitions=[T.OffsetForLeaderPartition(partition=0, current_leader_epoch=1, leader_epoch=0)])],
    )
    codes = [send(request, follower).topics[0].partitions[0].error_code for _ in range(3)]
    assert codes == [UNKNOWN_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, NONE]


def test_stop_broker_closes_port_and_fails_over(unique):
    with TestCluster(brokers=3) as c:
        c.create_topic("t", partitions=3, replication_factor=2)
        before = {i: c.partition("t", i) for i in range(3)}
        port = int(c.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])
        c.stop_broker(1)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        for i, p in before.items():
            now = c.partition("t", i)
            assert 1 not in now.isr
            assert now.leader_epoch == p.leader_epoch + (1 if p.leader == 1 else 0)
            assert now.leader != 1
        with KafkaAdminClient(bootstrap_servers=c.bootstrap_servers) as admin:
            [meta] = admin.describe_topics(["t"])
            offline = [p["offline_replicas"] for p in meta["partitions"] if 1 in p["replica_nodes"]]
            assert offline and all(o == [1] for o in offline)
            assert admin.describe_cluster()["controller_id"] in (2, 3)
        c.start_broker(1)
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        assert all(1 in c.partition("t", i).isr for i in range(3) if 1 in before[i].replicas)


def test_leader_lost_without_replica_reports_leader_not_available(unique):
    with TestCluster(brokers=2) as c:
        c.create_topic("solo", partitions=1, replication_factor=1)
        leader = c.partition("solo", 0).leader
        c.stop_broker(leader)
        with KafkaAdminClient(bootstrap_servers=c.bootstrap_servers) as admin:
            [meta] = admin.describe_topics(["solo"])
        p = meta["partitions"][0]
        assert (p["error_code"], p["leader_id"], p["leader_epoch"]) == (5, -1, 1)
        c.start_broker(leader)
        assert c.partition("solo", 0).leader == leader and c.partition("solo", 0).leader_epoch == 2


def test_request_log_records_api_version_and_broker(cluster, send):
    cluster.clear_request_log()
    send(MetadataRequest(topics=[]), 3)
    [record] = [r for r in cluster.request_log if r.api_key == METADATA]
    assert (record.api_name, record.version, record.broker_id) == ("Metadata", 13, 3)
    cluster.clear_request_log()
    assert cluster.request_log == []


def test_unsupported_version_closes_the_connection(cluster):
    """Kafka 4.0 removed OffsetForLeaderEpoch v0-1: such a request gets no answer, the connection closes."""
    port = int(cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])
    request = OffsetForLeaderEpochRequest(version=1, topics=[])
    request.with_header(correlation_id=1, client_id="raw")
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        sock.sendall(bytes(request.encode(header=True, framed=True)))
        assert sock.recv(4) == b""
