"""DescribeConfigs and IncrementalAlterConfigs (plus CreatePartitions, also controller-bound)."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource
from kafka.protocol.admin import CreatePartitionsRequest, DescribeConfigsRequest, IncrementalAlterConfigsRequest

from reconciler.testing import KafkaApiError, TestCluster

NONE, UNKNOWN_TOPIC, INVALID_PARTITIONS, INVALID_CONFIG, INVALID_REQUEST = 0, 3, 37, 40, 42
DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
TOPIC = 2


def describe(send, name, keys=None, broker=1, synonyms=False):
    request = DescribeConfigsRequest(resources=[(TOPIC, name, keys)], include_synonyms=synonyms, include_documentation=False)
    [result] = send(request, broker).results
    return result


def alter(send, name, *ops, validate_only=False, broker=1):
    request = IncrementalAlterConfigsRequest(resources=[(TOPIC, name, list(ops))], validate_only=validate_only)
    [result] = send(request, broker).responses
    return result


def values(result):
    return {c.name: (c.value, c.config_source) for c in result.configs}


def test_sources_dynamic_and_default(cluster, send, unique):
    name = unique()
    cluster.create_topic(name, configs={"retention.ms": "1000"})
    got = values(describe(send, name))
    assert got["retention.ms"] == ("1000", DYNAMIC_TOPIC_CONFIG)
    assert got["cleanup.policy"] == ("delete", DEFAULT_CONFIG)
    assert got["segment.bytes"] == ("1073741824", DEFAULT_CONFIG)


def test_static_broker_override_is_source_4():
    with (
        TestCluster(brokers=1, broker_configs={"log.retention.ms": "86400000"}) as c,
        KafkaAdminClient(bootstrap_servers=c.bootstrap_servers) as admin,
    ):
        c.create_topic("t")
        result = admin.describe_configs(
            [ConfigResource("TOPIC", "t", ["retention.ms"])], config_filter="all", include_synonyms=True
        )
        entry = result["topic"]["t"]["retention.ms"]
        assert entry["value"] == "86400000" and entry["config_source"] == "STATIC_BROKER_CONFIG"
        assert [s["source"] for s in entry["synonyms"]] == ["STATIC_BROKER_CONFIG", "DEFAULT_CONFIG"]


def test_requested_unknown_keys_are_silently_omitted(cluster, send, unique):
    name = unique()
    cluster.create_topic(name)
    result = describe(send, name, keys=["retention.ms", "no.such.key"])
    assert result.error_code == NONE and [c.name for c in result.configs] == ["retention.ms"]


def test_unknown_topic_is_unknown_topic_or_partition(send, cluster, unique):
    name = unique()
    cluster.create_topic(name)
    request = DescribeConfigsRequest(
        resources=[(TOPIC, "nope-x", None), (TOPIC, name, ["retention.ms"])], include_synonyms=False, include_documentation=False
    )
    missing, present = send(request, 2).results
    assert missing.error_code == UNKNOWN_TOPIC and missing.configs == []
    assert present.error_code == NONE


def test_set_then_delete_reads_back_inherited_value(cluster, send, unique):
    name = unique()
    cluster.create_topic(name)
    assert alter(send, name, ("retention.ms", SET, "5000")).error_code == NONE
    assert values(describe(send, name))["retention.ms"] == ("5000", DYNAMIC_TOPIC_CONFIG)
    assert alter(send, name, ("retention.ms", DELETE, None)).error_code == NONE
    assert values(describe(send, name))["retention.ms"] == ("604800000", DEFAULT_CONFIG)
    assert cluster.topic_configs(name) == {}


def test_delete_of_unset_key_is_none(cluster, send, unique):
    name = unique()
    cluster.create_topic(name)
    assert alter(send, name, ("segment.ms", DELETE, None)).error_code == NONE


def test_one_bad_value_rejects_the_whole_resource(cluster, send, unique):
    name = unique()
    cluster.create_topic(name, configs={"retention.ms": "1000"})
    result = alter(send, name, ("retention.ms", SET, "2000"), ("cleanup.policy", SET, "shred"))
    assert result.error_code == INVALID_CONFIG and result.error_message
    assert cluster.topic_configs(name) == {"retention.ms": "1000"}


def test_atomic_per_resource_not_across_resources(cluster, send, unique):
    good, bad = unique(), unique()
    cluster.create_topic(good)
    cluster.create_topic(bad)
    request = IncrementalAlterConfigsRequest(
        resources=[
            (TOPIC, good, [("retention.ms", SET, "3000")]),
            (TOPIC, bad, [("retention.ms", SET, "x")]),
            (TOPIC, "missing-topic-x", [("retention.ms", SET, "1")]),
        ],
        validate_only=False,
    )
    codes = [r.error_code for r in send(request, 3).responses]
    assert codes == [NONE, INVALID_CONFIG, UNKNOWN_TOPIC]
    assert cluster.topic_configs(good) == {"retention.ms": "3000"} and cluster.topic_configs(bad) == {}


def test_validate_only_changes_nothing(cluster, send, unique):
    name = unique()
    cluster.create_topic(name)
    assert alter(send, name, ("retention.ms", SET, "1"), validate_only=True).error_code == NONE
    assert alter(send, name, ("retention.ms", SET, "x"), validate_only=True).error_code == INVALID_CONFIG
    assert cluster.topic_configs(name) == {}


def test_append_and_subtract_on_list_keys(cluster, send, unique):
    name = unique()
    cluster.create_topic(name)
    assert alter(send, name, ("cleanup.policy", APPEND, "compact")).error_code == NONE
    assert cluster.topic_configs(name) == {"cleanup.policy": "delete,compact"}
    assert alter(send, name, ("cleanup.policy", SUBTRACT, "delete")).error_code == NONE
    assert cluster.topic_configs(name) == {"cleanup.policy": "compact"}
    assert alter(send, name, ("retention.ms", APPEND, "1")).error_code == INVALID_CONFIG


def test_unknown_key_and_duplicate_keys(cluster, send, unique):
    name = unique()
    cluster.create_topic(name)
    assert alter(send, name, ("retention.mss", SET, "1")).error_code == INVALID_CONFIG
    dup = alter(send, name, ("retention.ms", SET, "1"), ("retention.ms", DELETE, None))
    assert dup.error_code == INVALID_REQUEST


def test_admin_client_incremental_alter_and_describe(admin, cluster, unique):
    name = unique()
    cluster.create_topic(name)
    assert admin.alter_configs([ConfigResource("TOPIC", name, {"retention.ms": "7000"})]) == {"topic": {name: "OK"}}
    described = admin.describe_configs([ConfigResource("TOPIC", name)])
    assert described["topic"][name]["retention.ms"]["value"] == "7000"


def test_create_partitions_count_is_the_new_total(cluster, send, unique):
    name = unique()
    cluster.create_topic(name, partitions=2, replication_factor=2)
    T = CreatePartitionsRequest.CreatePartitionsTopic

    def grow(count, validate_only=False):
        request = CreatePartitionsRequest(
            topics=[T(name=name, count=count, assignments=None)], timeout_ms=5000, validate_only=validate_only
        )
        return send(request, 2).results[0].error_code

    assert grow(2) == INVALID_PARTITIONS
    assert grow(1) == INVALID_PARTITIONS
    assert grow(5, validate_only=True) == NONE
    with pytest.raises(KafkaApiError):
        cluster.partition(name, 2)
    assert grow(5) == NONE
    p4 = cluster.partition(name, 4)
    assert len(p4.replicas) == 2 and p4.leader_epoch == 0
    request = CreatePartitionsRequest(
        topics=[T(name="missing-x", count=3, assignments=None)], timeout_ms=5000, validate_only=False
    )
    assert send(request, 1).results[0].error_code == UNKNOWN_TOPIC
