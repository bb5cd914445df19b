"""CreateTopics (KAFKA_SEMANTICS.md "CreateTopics" and the observed-on-4.0 list)."""

from __future__ import annotations

import time
import uuid

import pytest
from kafka import KafkaAdminClient
from kafka.protocol.admin import CreateTopicsRequest
from kafka.protocol.metadata import MetadataRequest

from reconciler.testing import TestCluster

Topic = CreateTopicsRequest.CreatableTopic
Config = Topic.CreatableTopicConfig

NONE, INVALID_TOPIC, ALREADY_EXISTS, INVALID_PARTITIONS, INVALID_RF, INVALID_CONFIG = 0, 17, 36, 37, 38, 40
INVALID_REQUEST, POLICY_VIOLATION = 42, 44
DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG = 1, 5


def create(send, *topics, validate_only=False, broker=1):
    request = CreateTopicsRequest(topics=list(topics), timeout_ms=5000, validate_only=validate_only)
    return {t.name: t for t in send(request, broker).topics}


def topic(name, partitions=1, rf=1, **configs):
    return Topic(
        name=name,
        num_partitions=partitions,
        replication_factor=rf,
        assignments=[],
        configs=[Config(name=k.replace("_", "."), value=v) for k, v in configs.items()],
    )


def metadata_names(send, broker=1):
    return {t.name for t in send(MetadataRequest(topics=None, allow_auto_topic_creation=False), broker).topics}


def test_create_topic_is_visible_with_id_epoch_replicas(send, unique):
    name = unique()
    result = create(send, topic(name, partitions=3, rf=2))[name]
    assert result.error_code == NONE and isinstance(result.topic_id, uuid.UUID)
    [meta] = send(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=name)]), 2).topics
    assert meta.error_code == NONE and meta.topic_id == result.topic_id and not meta.is_internal
    assert [p.partition_index for p in meta.partitions] == [0, 1, 2]
    for p in meta.partitions:
        assert p.leader_epoch == 0 and len(p.replica_nodes) == 2
        assert p.isr_nodes == p.replica_nodes and p.leader_id == p.replica_nodes[0]


def test_validate_only_creates_nothing_and_reserves_nothing(send, cluster, unique):
    name = unique()
    for _ in range(2):
        result = create(send, topic(name, partitions=4, rf=3, retention_ms="1000"), validate_only=True)[name]
        assert result.error_code == NONE
    assert name not in cluster.topic_names() and name not in metadata_names(send)
    assert create(send, topic(name))[name].error_code == NONE


def test_v5_plus_echoes_partitions_rf_and_effective_configs_also_in_validate_only(send, unique):
    name = unique()
    for validate_only in (True, False):
        result = create(send, topic(name, partitions=4, rf=2, retention_ms="1000"), validate_only=validate_only)[name]
        assert result.num_partitions == 4 and result.replication_factor == 2
        assert result.topic_id != uuid.UUID(int=0)
        configs = {c.name: c for c in result.configs}
        assert configs["retention.ms"].value == "1000"
        assert configs["retention.ms"].config_source == DYNAMIC_TOPIC_CONFIG
        assert configs["cleanup.policy"].value == "delete"
        assert configs["cleanup.policy"].config_source == DEFAULT_CONFIG
        assert not configs["cleanup.policy"].read_only and not configs["cleanup.policy"].is_sensitive
        assert [c.name for c in result.configs] == sorted(configs)


def test_topic_already_exists_also_in_validate_only(send, unique):
    name = unique()
    create(send, topic(name))
    assert create(send, topic(name))[name].error_code == ALREADY_EXISTS
    assert create(send, topic(name), validate_only=True)[name].error_code == ALREADY_EXISTS


@pytest.mark.parametrize(
    "name,ok",
    [
        ("a" * 249, True),
        ("a" * 250, False),
        (".", False),
        ("..", False),
        ("", False),
        ("has space", False),
        ("slash/no", False),
        ("ok._-AZ09", True),
    ],
)
def test_topic_names(send, name, ok):
    result = create(send, topic(name), validate_only=True)[name]
    assert result.error_code == (NONE if ok else INVALID_TOPIC)


def test_dot_underscore_collision_with_existing_topic(send, unique):
    base = unique("coll")
    create(send, topic(f"{base}.x"))
    assert create(send, topic(f"{base}_x"))[f"{base}_x"].error_code == INVALID_TOPIC
    assert create(send, topic(f"{base}_x"), validate_only=True)[f"{base}_x"].error_code == INVALID_TOPIC
    # The same name is TOPIC_ALREADY_EXISTS, not a collision.
    assert create(send, topic(f"{base}.x"))[f"{base}.x"].error_code == ALREADY_EXISTS


@pytest.mark.parametrize("partitions", [0, -2])
def test_invalid_partitions(send, unique, partitions):
    name = unique()
    assert create(send, topic(name, partitions=partitions))[name].error_code == INVALID_PARTITIONS


@pytest.mark.parametrize("rf", [0, 4, -2])
def test_invalid_replication_factor_also_in_validate_only(send, unique, rf):
    name = unique()
    assert create(send, topic(name, rf=rf), validate_only=True)[name].error_code == INVALID_RF
    assert create(send, topic(name, rf=rf))[name].error_code == INVALID_RF


def test_replication_factor_counts_live_brokers_only(unique):
    with TestCluster(brokers=3) as c:
        c.stop_broker(3)
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap_servers)
        result = admin.create_topics(
            {"x": {"num_partitions": 1, "replication_factor": 3}}, validate_only=True, raise_errors=False
        )
        admin.close()
        assert result["topics"][0]["error_code"] == INVALID_RF


@pytest.mark.parametrize(
    "configs", [{"retention_mss": "1"}, {"retention_ms": "soon"}, {"cleanup_policy": "shred"}, {"min_insync_replicas": "0"}]
)
def test_unknown_key_or_bad_value_is_invalid_config(send, unique, configs):
    name = unique()
    assert create(send, topic(name, **configs), validate_only=True)[name].error_code == INVALID_CONFIG


def test_defaults_minus_one_use_broker_defaults(send, unique):
    name = unique()
    result = create(send, topic(name, partitions=-1, rf=-1))[name]
    assert (result.num_partitions, result.replication_factor) == (1, 1)


def test_broker_level_defaults_are_honoured():
    configs = {"num.partitions": "4", "default.replication.factor": "2"}
    with TestCluster(brokers=3, broker_configs=configs) as c, KafkaAdminClient(bootstrap_servers=c.bootstrap_servers) as admin:
        result = admin.create_topics(["dflt"])["topics"][0]
        assert (result["num_partitions"], result["replication_factor"]) == (4, 2)
        assert len(c.partition("dflt", 3).replicas) == 2


def test_more_than_10000_metadata_records_is_policy_violation_for_every_topic(send, unique):
    small, big = unique(), unique()
    # 1 topic record + 9,998 partition records + 1 config record = 10,000: allowed.
    assert create(send, topic(small, partitions=9998, retention_ms="1"), validate_only=True)[small].error_code == NONE
    results = create(send, topic(small, partitions=9998, retention_ms="1"), topic(big, partitions=1), validate_only=True)
    assert {r.error_code for r in results.values()} == {POLICY_VIOLATION}
    results = create(send, topic(small, partitions=9999, retention_ms="1"), topic(big))
    assert {r.error_code for r in results.values()} == {POLICY_VIOLATION}
    assert small not in metadata_names(send) and big not in metadata_names(send)


def test_duplicate_names_in_one_request_are_invalid_request(send, unique):
    name = unique()
    assert create(send, topic(name), topic(name))[name].error_code == INVALID_REQUEST


def test_any_live_broker_accepts_controller_bound_requests(send, unique):
    for broker in (1, 2, 3):
        name = unique()
        assert create(send, topic(name), broker=broker)[name].error_code == NONE


def test_recreated_topic_gets_a_new_id(send, admin, unique):
    name = unique()
    first = create(send, topic(name))[name].topic_id
    admin.delete_topics([name])
    second = create(send, topic(name))[name].topic_id
    assert first != second


def test_new_topics_appear_in_metadata_after_the_propagation_delay():
    with (
        TestCluster(brokers=1, metadata_propagation_delay=0.3) as c,
        KafkaAdminClient(bootstrap_servers=c.bootstrap_servers) as admin,
    ):
        admin.create_topics(["slow"])
        assert "slow" not in admin.list_topics()
        assert admin.create_topics(["slow"], raise_errors=False)["topics"][0]["error_code"] == ALREADY_EXISTS
        time.sleep(0.35)
        assert "slow" in admin.list_topics()


def test_admin_client_create_topics_validate_only(admin, cluster, unique):
    name = unique()
    result = admin.create_topics(
        {name: {"num_partitions": 2, "replication_factor": 3, "configs": {"retention.ms": "5000"}}}, validate_only=True
    )
    assert result["topics"][0]["configs"]["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    assert name not in cluster.topic_names()
