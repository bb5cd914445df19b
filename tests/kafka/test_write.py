"""apply's ClusterPort on the adapter, method by method, against the test cluster."""

from __future__ import annotations

import pytest

from reconciler.models.plan import (
    AddPartitions,
    AlterConfigs,
    ConfigChange,
    CreateTopic,
    PartitionTruncation,
    Plan,
    TopicPreconditions,
    TruncateRecords,
)
from reconciler.ports import TopicShape, Visible
from reconciler.testing import TestCluster
from tests.kafka.helpers import api_counts, kafka_of, sent

NEW, EXISTS = TopicPreconditions(exists=False), TopicPreconditions(exists=True)


def create(name, partitions=3, rf=1, **configs):
    return CreateTopic(topic=name, partitions=partitions, replication_factor=rf, configs=configs, preconditions=NEW)


def names(errors: dict) -> dict:
    return {topic: error.name if error else None for topic, error in errors.items()}


def test_validate_only_creates_nothing_and_reports_what_the_brokers_would_refuse(test_cluster, kafka):
    test_cluster.create_topic("taken")
    errors = kafka.create_topics(
        [
            create("fine", **{"retention.ms": "60000"}),
            create("too-replicated", rf=4),
            create("typo", **{"retention.msec": "1"}),
            create("taken"),
        ],
        validate_only=True,
    )
    assert names(errors) == {
        "fine": None,
        "too-replicated": "INVALID_REPLICATION_FACTOR",
        "typo": "INVALID_CONFIG",
        "taken": "TOPIC_ALREADY_EXISTS",
    }
    assert errors["typo"].message and not errors["typo"].retriable
    assert test_cluster.topic_names() == ["taken"]
    [request] = sent(test_cluster, "CreateTopics")
    assert request.validate_only is True


def test_create_topics_and_wait_until_metadata_shows_them(test_cluster, kafka):
    assert kafka.create_topics([create("made", partitions=2, **{"cleanup.policy": "compact"})], validate_only=False) == {
        "made": None
    }
    assert kafka.wait_for_topics(["made"], timeout_s=5) == []
    assert test_cluster.topic_configs("made") == {"cleanup.policy": "compact"}
    assert test_cluster.partition("made", 1).replicas
    assert kafka.wait_for_topics(["made", "never-made"], timeout_s=0.3) == ["never-made"]


def test_wait_for_topics_outlasts_metadata_propagation():
    with TestCluster(brokers=3, metadata_propagation_delay=0.4) as c, kafka_of(c) as kafka:
        assert kafka.create_topics([create("slow")], validate_only=False) == {"slow": None}
        assert kafka.wait_for_topics(["slow"], timeout_s=5) == []


def test_create_partitions_validates_then_adds(test_cluster, kafka):
    test_cluster.create_topic("grow", partitions=2)
    grow = AddPartitions(topic="grow", before=2, after=5, preconditions=EXISTS)
    assert kafka.create_partitions([grow], validate_only=True) == {"grow": None}
    assert kafka.observe_topics(["grow"]).topics["grow"].partitions[-1].partition == 1
    assert kafka.create_partitions([grow], validate_only=False) == {"grow": None}
    # Every broker shows the new partitions a moment later (as apply waits for).
    assert kafka.confirm_visible(Visible(topics={"grow": TopicShape(partitions=5)}), 5) == {}
    assert len(kafka.observe_topics(["grow"]).topics["grow"].partitions) == 5
    same = AddPartitions(topic="grow", before=5, after=5, preconditions=EXISTS)
    assert names(kafka.create_partitions([same], validate_only=True)) == {"grow": "INVALID_PARTITIONS"}


def test_alter_configs_sets_and_deletes_keys_atomically_per_topic(test_cluster, kafka):
    test_cluster.create_topic("conf", configs={"retention.ms": "1000", "segment.ms": "600000"})
    test_cluster.create_topic("other")
    change = AlterConfigs(
        topic="conf",
        preconditions=EXISTS,
        changes=[ConfigChange(key="retention.ms", op="set", after="86400000"), ConfigChange(key="segment.ms", op="delete")],
    )
    bad = AlterConfigs(
        topic="other",
        preconditions=EXISTS,
        changes=[
            ConfigChange(key="retention.ms", op="set", after="5000"),
            ConfigChange(key="cleanup.policy", op="set", after="shred"),
        ],
    )
    assert names(kafka.alter_configs([change, bad], validate_only=True)) == {"conf": None, "other": "INVALID_CONFIG"}
    assert test_cluster.topic_configs("conf") == {"retention.ms": "1000", "segment.ms": "600000"}

    assert names(kafka.alter_configs([change, bad], validate_only=False)) == {"conf": None, "other": "INVALID_CONFIG"}
    assert test_cluster.topic_configs("conf") == {"retention.ms": "86400000"}
    assert test_cluster.topic_configs("other") == {}  # one bad value rejects the whole resource
    [_, request] = sent(test_cluster, "IncrementalAlterConfigs")
    ops = {c.name: (c.config_operation, c.value) for r in request.resources if r.resource_name == "conf" for c in r.configs}
    assert ops == {"retention.ms": (0, "86400000"), "segment.ms": (1, None)}


def test_epoch_end_offsets_after_a_clean_leader_change_and_after_an_unclean_election(test_cluster, kafka):
    test_cluster.create_topic("fenced", partitions=2, replication_factor=2)
    test_cluster.produce_many({("fenced", 0): 50, ("fenced", 1): 50})
    moved = test_cluster.partition("fenced", 0)
    test_cluster.move_leader("fenced", 0, to=moved.replicas[1])
    test_cluster.unclean_election("fenced", 1, truncate_to=20)

    checks = kafka.epoch_end_offsets({("fenced", 0): 0, ("fenced", 1): 0})
    clean, unclean = checks[("fenced", 0)], checks[("fenced", 1)]
    # A clean change keeps every record of epoch 0: it ends at the high watermark seen then.
    assert (clean.leader, clean.leader_epoch, clean.end_offset, clean.error) == (moved.replicas[1], 1, 50, None)
    # After the unclean election epoch 0 ends where the new leader's log did.
    assert (unclean.leader_epoch, unclean.end_offset, unclean.error) == (2, 20, None)
    for request in sent(test_cluster, "OffsetForLeaderEpoch"):
        for p in request.topics[0].partitions:
            assert (p.current_leader_epoch, p.leader_epoch) == (test_cluster.partition("fenced", p.partition).leader_epoch, 0)
    unknown = kafka.epoch_end_offsets({("fenced", 7): 0, ("gone", 0): 0})
    assert all(c.end_offset == -1 and c.error is not None for c in unknown.values())


def test_delete_records_sends_one_request_per_leader_with_the_planned_offsets(test_cluster, kafka):
    test_cluster.create_topic("purge", partitions=3)
    test_cluster.create_topic("purge2", partitions=3)
    test_cluster.produce_many({(t, p): 30 for t in ("purge", "purge2") for p in range(3)})
    targets = {(t, p): 10 + p for t in ("purge", "purge2") for p in range(3)}
    kafka.observe_topics(["purge", "purge2"])
    test_cluster.clear_request_log()

    outcomes = kafka.delete_records(targets)
    assert {tp: (o.low_watermark, o.error) for tp, o in outcomes.items()} == {
        tp: (offset, None) for tp, offset in targets.items()
    }
    assert api_counts(test_cluster) == {"DeleteRecords": 3}
    offsets = {
        (t.name, p.partition_index): p.offset for r in sent(test_cluster, "DeleteRecords") for t in r.topics for p in t.partitions
    }
    assert offsets == targets
    assert kafka.log_start_offsets(list(targets)) == targets
    assert kafka.log_start_offsets([("purge", 9)]) == {("purge", 9): -1}


def test_delete_records_never_sends_a_negative_offset(test_cluster, kafka):
    test_cluster.create_topic("precious")
    test_cluster.produce_many({("precious", 0): 5})
    test_cluster.clear_request_log()
    with pytest.raises(ValueError, match="negative"):
        kafka.delete_records({("precious", 0): -1})
    assert "DeleteRecords" not in api_counts(test_cluster)
    assert test_cluster.partition("precious", 0).log_start_offset == 0


def test_delete_records_reports_the_brokers_refusals(test_cluster, kafka):
    test_cluster.create_topic("compacted", configs={"cleanup.policy": "compact"})
    test_cluster.create_topic("short")
    test_cluster.produce_many({("compacted", 0): 5, ("short", 0): 5})
    outcomes = kafka.delete_records({("compacted", 0): 2, ("short", 0): 9})
    assert {tp: (o.low_watermark, o.error.name) for tp, o in outcomes.items()} == {
        ("compacted", 0): (-1, "POLICY_VIOLATION"),
        ("short", 0): (-1, "OFFSET_OUT_OF_RANGE"),
    }


def test_delete_topics(test_cluster, kafka):
    test_cluster.create_topic("old")
    assert names(kafka.delete_topics(["old", "never"])) == {"old": None, "never": "UNKNOWN_TOPIC_OR_PARTITION"}
    assert test_cluster.topic_names() == []


def test_epoch_fencing_support_comes_from_every_brokers_api_versions(kafka):
    assert kafka.supports_epoch_fencing() is True
    with TestCluster(brokers=2, disabled_apis={23}) as old, kafka_of(old) as without:
        assert without.supports_epoch_fencing() is False


def test_observe_for_plan_rereads_the_plans_topics_with_epoch_proof(test_cluster, kafka):
    for name in ("cut", "conf", "unrelated"):
        test_cluster.create_topic(name, partitions=2)
    test_cluster.produce_many({("cut", 0): 8})
    plan = Plan(
        cluster="test",
        actions=[
            AlterConfigs(topic="conf", preconditions=EXISTS, changes=[ConfigChange(key="retention.ms", op="set", after="1")]),
            TruncateRecords(
                topic="cut",
                preconditions=EXISTS,
                rules=["keep 2"],
                rule_kinds=["keep_last"],
                partitions=[
                    PartitionTruncation(
                        partition=0, target_offset=6, leader=1, leader_epoch=0, log_start_offset=0, high_watermark=8
                    )
                ],
            ),
            create("brand-new"),
        ],
    )
    test_cluster.clear_request_log()
    now = kafka.observe_for_plan(plan)
    assert sorted(now.topics) == ["conf", "cut"]
    assert now.topics["cut"].partitions[0].epoch_end_offset == 8
    assert now.topics["conf"].partitions[0].epoch_end_offset is None
    assert now.topics["conf"].configs["retention.ms"].value == "604800000"
    assert api_counts(test_cluster)["Metadata"] == 1
