"""ApiVersions, SASL, Produce, groups and the remaining admin-client calls, end to end."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError
from kafka.protocol.broker_version_data import BROKER_API_VERSIONS
from kafka.protocol.metadata import ApiVersionsRequest, FindCoordinatorRequest
from kafka.structs import OffsetAndMetadata

from reconciler.testing import TestCluster


def test_api_versions_match_kafka_4_0(admin):
    versions = admin.api_versions()
    for key, advertised in versions.items():
        assert BROKER_API_VERSIONS[(4, 0)][key] == advertised
    for key in (0, 2, 3, 8, 9, 10, 16, 18, 19, 20, 21, 23, 32, 35, 37, 44, 60):
        assert key in versions
    assert admin._manager.broker_version == (4, 0)


def test_api_versions_v0_to_v4(send):
    for version in range(5):
        response = send(ApiVersionsRequest(version=version), 1)
        assert response.error_code == 0 and any(k.api_key == 23 for k in response.api_keys)


def test_disabled_api_is_not_advertised():
    with TestCluster(brokers=1, disabled_apis={23}) as c, KafkaAdminClient(bootstrap_servers=c.bootstrap_servers) as admin:
        assert 23 not in admin.api_versions() and 2 in admin.api_versions()


def test_sasl_plain_accepts_the_right_password_and_refuses_a_wrong_one():
    with TestCluster(brokers=1, sasl_users={"alice": "pw"}) as c:
        common = dict(
            bootstrap_servers=c.bootstrap_servers,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_plain_username="alice",
        )
        with KafkaAdminClient(sasl_plain_password="pw", **common) as admin:
            assert admin.list_topics() == []
        with pytest.raises(KafkaError):
            KafkaAdminClient(sasl_plain_password="wrong", bootstrap_timeout_ms=1000, **common)
        assert [r.api_key for r in c.request_log].count(36) >= 2  # the client retries a failure


def test_producer_appends_with_create_time_timestamps(cluster, unique):
    name = unique()
    cluster.create_topic(name, partitions=2, replication_factor=3)
    now = int(time.time() * 1000)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    try:
        sent = [producer.send(name, b"v" * 10, partition=1, timestamp_ms=now - 1000 + i).get(timeout=10) for i in range(5)]
    finally:
        producer.close()
    assert [m.offset for m in sent] == [0, 1, 2, 3, 4]
    p = cluster.partition(name, 1)
    assert p.high_watermark == 5 and p.size_bytes > 0


def test_producer_gets_invalid_timestamp_for_far_future_records(cluster, unique):
    name = unique()
    cluster.create_topic(name)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, retries=0)
    try:
        future = producer.send(name, b"x", partition=0, timestamp_ms=int(time.time() * 1000) + 7_200_000)
        with pytest.raises(KafkaError):
            future.get(timeout=10)
    finally:
        producer.close()


def test_consumer_commit_and_committed(cluster, unique):
    name = unique()
    cluster.create_topic(name)
    cluster.produce(name, 0, [1] * 20)
    tp = TopicPartition(name, 0)
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id=f"g-{name}", enable_auto_commit=False)
    try:
        consumer.assign([tp])
        consumer.commit({tp: OffsetAndMetadata(12, "", -1)})
        assert consumer.committed(tp) == 12
    finally:
        consumer.close()
    assert cluster.committed_offsets(f"g-{name}") == {(name, 0): 12}


def test_groups_through_admin(cluster, admin, unique):
    name = unique()
    cluster.create_topic(name, partitions=2)
    cluster.commit_offsets("billing", {(name, 0): 120, (name, 1): 7})
    listed = {g["group_id"]: g for g in admin.list_groups()}
    assert listed["billing"]["group_state"] == "Empty" and listed["billing"]["protocol_type"] == ""
    offsets = admin.list_group_offsets({"billing": None, "other": None})
    assert offsets["billing"][TopicPartition(name, 0)].offset == 120
    assert offsets["other"] == {}
    assert "__consumer_offsets" in admin.list_topics()


def test_find_coordinator_batched_and_single(cluster, send):
    coordinator = cluster.coordinator("billing")
    batched = send(FindCoordinatorRequest(key_type=0, coordinator_keys=["billing", "x"]), 1)
    assert batched.coordinators[0].node_id == coordinator and batched.coordinators[0].error_code == 0
    single = send(FindCoordinatorRequest(version=3, key="billing", key_type=0), 2)
    assert single.node_id == coordinator


def test_describe_log_dirs_reports_bytes(cluster, admin, unique):
    name = unique()
    cluster.create_topic(name, replication_factor=3)
    cluster.produce(name, 0, [1] * 10, value_size=50)
    sizes = [
        p["partition_size"]
        for r in admin.describe_log_dirs({name: [0]})
        for d in r["log_dirs"]
        for t in d["topics"]
        for p in t["partitions"]
    ]
    assert sizes == [500, 500, 500]


def test_describe_cluster_shows_fenced_brokers_after_stop():
    with TestCluster(brokers=2) as c:
        c.stop_broker(2)
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap_servers)
        brokers = {b["broker_id"]: b["is_fenced"] for b in admin.describe_cluster()["brokers"]}
        assert brokers == {1: False, 2: True}
        assert admin.describe_cluster()["cluster_id"] == c.cluster_id
        admin.close()


def test_delete_topics_and_metadata_ids(cluster, admin, unique):
    name = unique()
    topic_id = cluster.create_topic(name)
    [meta] = admin.describe_topics([name])
    assert meta["topic_id"] == topic_id
    admin.delete_topics([name])
    assert name not in cluster.topic_names()
    result = admin.delete_topics([name], raise_errors=False)
    assert result["topics"][0]["error_code"] == 3
