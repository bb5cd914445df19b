"""The test cluster's own statement of Kafka 4.0's topic config rules (testing/log_config.py):
what a real broker accepts and refuses, with its INVALID_CONFIG texts, over the wire."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import CreateTopicsRequest, DeleteRecordsRequest, DescribeConfigsRequest

from reconciler.testing import log_config

Topic = CreateTopicsRequest.CreatableTopic
Config = Topic.CreatableTopicConfig
NONE, INVALID_CONFIG, POLICY_VIOLATION = 0, 40, 44
TOPIC = 2


def create(send, name, configs, validate_only=True):
    topic = Topic(
        name=name,
        num_partitions=1,
        replication_factor=1,
        assignments=[],
        configs=[Config(name=k, value=v) for k, v in configs.items()],
    )
    request = CreateTopicsRequest(topics=[topic], timeout_ms=5000, validate_only=validate_only)
    [result] = send(request, 1).topics
    return result.error_code, result.error_message


@pytest.mark.parametrize(
    "configs",
    [
        {"segment.bytes": "1048575"},  # 4.0's topic-level floor is still 14 bytes; 1 MiB came in 4.1
        {"segment.bytes": "14"},
        {"retention.ms": "-1"},
        {"retention.ms": "0"},
        {"retention.bytes": "-2"},
        {"cleanup.policy": ""},  # an empty list is valid in 4.0
        {"cleanup.policy": " compact , delete "},
        {"min.cleanable.dirty.ratio": "NaN"},  # ConfigDef.Range lets NaN through
        {"min.cleanable.dirty.ratio": "0.5d"},  # Double.parseDouble syntax
        {"retention.ms": " +007 "},
        {"message.timestamp.type": " LogAppendTime "},  # STRING values are trimmed
        {"preallocate": "TRUE"},
        {"compression.gzip.level": "-1"},
        {"compression.zstd.level": "-131072"},
        {"leader.replication.throttled.replicas": "*"},
        {"follower.replication.throttled.replicas": "0:1, 1:2"},
        {"message.downconversion.enable": "false"},  # deprecated no-op, still defined in 4.0
    ],
)
def test_accepted(send, unique, configs):
    assert create(send, unique(), configs) == (NONE, None)


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"retention.ms": "-2"}, "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
        ({"retention.ms": "-002"}, "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
        ({"segment.bytes": "13"}, "Invalid value 13 for configuration segment.bytes: Value must be at least 14"),
        ({"segment.bytes": "2147483648"}, "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT"),
        ({"retention.ms": "1_000"}, "Invalid value 1_000 for configuration retention.ms: Not a number of type LONG"),
        ({"retention.ms": "1d"}, "Invalid value 1d for configuration retention.ms: Not a number of type LONG"),
        ({"min.insync.replicas": "0"}, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
        (
            {"min.cleanable.dirty.ratio": "1e10"},
            "Invalid value 1.0E10 for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
        ),
        (
            {"cleanup.policy": "compact,purge"},
            "Invalid value purge for configuration cleanup.policy: String must be one of: compact, delete",
        ),
        (
            {"cleanup.policy": "Delete"},
            "Invalid value Delete for configuration cleanup.policy: String must be one of: compact, delete",
        ),
        (
            {"compression.type": "zip"},
            "Invalid value zip for configuration compression.type: String must be one "
            "of: uncompressed, zstd, lz4, snappy, gzip, producer",
        ),
        (
            {"message.timestamp.type": "createtime"},
            "Invalid value createtime for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime",
        ),
        ({"preallocate": "yes"}, "Invalid value yes for configuration preallocate: Expected value to be either true or false"),
        (
            {"compression.gzip.level": "0"},
            "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1",
        ),
        (
            {"compression.lz4.level": "18"},
            "Invalid value 18 for configuration compression.lz4.level: Value must be no more than 17",
        ),
        (
            {"leader.replication.throttled.replicas": "0:1,x"},
            "Invalid value [0:1, x] for configuration leader.replication.throttled.replicas: "
            "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following "
            "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
        ),
        (
            {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
            "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)",
        ),
        ({"message.format.version": "3.0"}, "Unknown topic config name: message.format.version"),  # removed in 4.0
        # Names are checked before values; values in LogConfig's definition order, not the request's.
        ({"retention.ms": "-5", "no.such.key": "1"}, "Unknown topic config name: no.such.key"),
        ({"retention.ms": "-5", "segment.ms": "0"}, "Invalid value 0 for configuration segment.ms: Value must be at least 1"),
        ({"retention.ms": None, "segment.ms": None}, "Null value not supported for topic configs: retention.ms,segment.ms"),
    ],
)
def test_refused_with_the_brokers_message(send, unique, configs, message):
    assert create(send, unique(), configs) == (INVALID_CONFIG, message)


def test_an_empty_cleanup_policy_refuses_delete_records(cluster, send, unique):
    name = unique()
    assert create(send, name, {"cleanup.policy": ""}, validate_only=False) == (NONE, None)
    request = DeleteRecordsRequest(topics=[(name, [(0, -1)])], timeout_ms=5000)
    [topic] = send(request, cluster.partition(name, 0).leader).topics
    assert topic.partitions[0].error_code == POLICY_VIOLATION


def test_every_4_0_key_is_described_with_its_default(cluster, send, unique):
    name = unique()
    cluster.create_topic(name)
    request = DescribeConfigsRequest(resources=[(TOPIC, name, None)], include_synonyms=False, include_documentation=False)
    [result] = send(request, 1).results
    described = {c.name: c.value for c in result.configs}
    assert described == {k.name: k.default for k in log_config.TOPIC_CONFIGS.values()}
    assert described["message.downconversion.enable"] == "true"
    assert described["message.timestamp.after.max.ms"] == "3600000"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.5, "0.5"),
        (2.0, "2.0"),
        (1e10, "1.0E10"),
        (1.5e-5, "1.5E-5"),
        (-0.0, "-0.0"),
        (float("inf"), "Infinity"),
    ],
)
def test_doubles_are_shown_as_java_prints_them(value, shown):
    assert log_config.java_double_text(value) == shown
