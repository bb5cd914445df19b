"""The topic config catalogue accepts what Kafka 4.0 accepts and names what is wrong otherwise."""

import pytest

from reconciler.kafka_configs import TOPIC_CONFIGS, cleanup_policy_allows_delete, value_error


@pytest.mark.parametrize(
    "key,value",
    [
        ("retention.ms", "-1"),
        ("retention.ms", "604800000"),
        ("cleanup.policy", "compact,delete"),
        ("cleanup.policy", "delete"),
        ("preallocate", "TRUE"),
        ("min.cleanable.dirty.ratio", "0.25"),
        ("compression.type", "zstd"),
        ("compression.gzip.level", "-1"),
        ("message.timestamp.type", "LogAppendTime"),
        ("follower.replication.throttled.replicas", ""),
        ("segment.bytes", "1048575"),
        ("segment.bytes", "14"),
    ],
)
def test_valid_values(key, value):
    assert value_error(key, value) is None


@pytest.mark.parametrize(
    "key,value,phrase",
    [
        ("retention.mss", "1", "unknown topic config key"),
        ("retention.ms", "7d", "whole number"),
        ("retention.ms", "-2", "at least -1"),
        ("min.insync.replicas", "0", "at least 1"),
        ("segment.bytes", "2147483648", "out of range"),
        ("segment.bytes", "13", "at least 14"),
        ("preallocate", "yes", "true or false"),
        ("cleanup.policy", "compact,purge", "accepts delete, compact"),
        ("cleanup.policy", "", "accepts delete, compact"),
        ("min.cleanable.dirty.ratio", "1.5", "at most 1"),
        ("compression.gzip.level", "0", "-1 or between 1 and 9"),
        ("compression.lz4.level", "18", "at most 17"),
        ("message.timestamp.type", "createtime", "accepts CreateTime"),
    ],
)
def test_invalid_values_are_named(key, value, phrase):
    assert phrase in (value_error(key, value) or "")


def test_every_default_is_valid_for_its_own_key():
    for key, spec in TOPIC_CONFIGS.items():
        assert value_error(key, spec.default) is None, key


def test_cleanup_policy_allows_delete():
    assert cleanup_policy_allows_delete("delete") and cleanup_policy_allows_delete("compact, delete")
    assert cleanup_policy_allows_delete(None)  # Kafka's default is delete
    assert not cleanup_policy_allows_delete("compact")
    assert not cleanup_policy_allows_delete("")  # an empty list: the broker refuses DeleteRecords
