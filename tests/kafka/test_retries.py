"""Retriable answers and lost answers: bounded retries, and the cases that must not be resent."""

from __future__ import annotations

from reconciler.models.plan import AddPartitions, CreateTopic, TopicPreconditions
from reconciler.ports import TopicShape, Visible
from reconciler.testing import TestCluster
from tests.kafka.helpers import api_counts, kafka_of, sent

METADATA, LIST_OFFSETS, CREATE_TOPICS, DELETE_RECORDS, OFFSET_FOR_LEADER_EPOCH = 3, 2, 19, 21, 23
DESCRIBE_CONFIGS, CREATE_PARTITIONS = 32, 37
LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, NOT_CONTROLLER = 5, 6, 41
FENCED_LEADER_EPOCH, THROTTLING_QUOTA_EXCEEDED = 74, 89


def create(name):
    return CreateTopic(topic=name, partitions=2, replication_factor=1, preconditions=TopicPreconditions(exists=False))


def test_not_controller_finds_the_controller_again_and_resends(test_cluster, kafka):
    test_cluster.inject_error(CREATE_TOPICS, NOT_CONTROLLER, times=1)
    assert kafka.create_topics([create("made")], validate_only=False) == {"made": None}
    assert test_cluster.topic_names() == ["made"]
    assert api_counts(test_cluster)["CreateTopics"] == 2


def test_throttling_waits_the_time_the_broker_asked_for(test_cluster, kafka):
    test_cluster.create_topic("grow", partitions=1)
    test_cluster.clear_request_log()
    test_cluster.inject_error(CREATE_PARTITIONS, THROTTLING_QUOTA_EXCEEDED, times=1, throttle_time_ms=300)
    grow = AddPartitions(topic="grow", before=1, after=3, preconditions=TopicPreconditions(exists=True))
    assert kafka.create_partitions([grow], validate_only=False) == {"grow": None}
    first, second = [r for r in test_cluster.request_log if r.api_name == "CreatePartitions"]
    assert second.time - first.time >= 0.3  # a lower bound: the adapter waited at least that long
    assert kafka.confirm_visible(Visible(topics={"grow": TopicShape(partitions=3)}), 5) == {}
    assert len(kafka.observe_topics(["grow"]).topics["grow"].partitions) == 3


def test_retriable_errors_that_persist_are_returned_after_bounded_retries(test_cluster, kafka):
    test_cluster.inject_error(CREATE_TOPICS, NOT_CONTROLLER, times=None)
    [(name, error)] = kafka.create_topics([create("never")], validate_only=True).items()
    assert (name, error.name, error.retriable) == ("never", "NOT_CONTROLLER", True)
    assert 2 < api_counts(test_cluster)["CreateTopics"] < 10


def test_reads_follow_a_leader_change_through_unknown_leader_epoch(test_cluster):
    test_cluster.create_topic("moving", partitions=1, replication_factor=2)
    test_cluster.produce_many({("moving", 0): 12})
    with kafka_of(test_cluster) as kafka:
        kafka.observe_topics(["moving"])
        old = test_cluster.partition("moving", 0)
        # The new leader answers as if it had not caught up with its epoch for a while.
        test_cluster.move_leader("moving", 0, to=old.replicas[1], unknown_epoch_responses=2)
        test_cluster.clear_request_log()
        p = kafka.observe_topics(["moving"]).topics["moving"].partitions[0]
    assert (p.leader, p.leader_epoch, p.high_watermark) == (old.replicas[1], 1, 12)
    assert api_counts(test_cluster)["ListOffsets"] > 2 and api_counts(test_cluster)["Metadata"] == 2


def test_leader_not_available_in_metadata_and_offsets_is_retried(test_cluster, kafka):
    test_cluster.create_topic("electing", partitions=3)
    test_cluster.produce_many({("electing", 2): 4})
    test_cluster.inject_error(METADATA, LEADER_NOT_AVAILABLE, times=1)
    test_cluster.inject_error(LIST_OFFSETS, LEADER_NOT_AVAILABLE, times=2)
    observed = kafka.observe_topics(["electing"])
    assert [p.high_watermark for p in observed.topics["electing"].partitions] == [0, 0, 4]
    assert all(p.leader > 0 for p in observed.topics["electing"].partitions)


def test_epoch_checks_are_retried_on_fenced_leader_epoch(test_cluster, kafka):
    test_cluster.create_topic("fenced", partitions=1)
    test_cluster.produce_many({("fenced", 0): 5})
    test_cluster.inject_error(OFFSET_FOR_LEADER_EPOCH, FENCED_LEADER_EPOCH, times=1)
    check = kafka.epoch_end_offsets({("fenced", 0): 0})[("fenced", 0)]
    assert (check.end_offset, check.error) == (5, None)


def test_delete_records_to_a_moved_leader_is_returned_not_resent(test_cluster, kafka):
    test_cluster.create_topic("purge", partitions=1, replication_factor=2)
    test_cluster.produce_many({("purge", 0): 10})
    kafka.observe_topics(["purge"])
    old = test_cluster.partition("purge", 0)
    test_cluster.move_leader("purge", 0, to=old.replicas[1])
    test_cluster.clear_request_log()

    [outcome] = kafka.delete_records({("purge", 0): 4}).values()
    assert (outcome.low_watermark, outcome.error.name) == (-1, "NOT_LEADER_OR_FOLLOWER")
    assert [r.broker_id for r in test_cluster.request_log if r.api_name == "DeleteRecords"] == [old.leader]
    # apply checks the new leader's epoch and asks again; by then the adapter routes anew.
    [outcome] = kafka.delete_records({("purge", 0): 4}).values()
    assert (outcome.low_watermark, outcome.error) == (4, None)
    assert test_cluster.request_log[-1].broker_id == old.replicas[1]


def test_a_lost_delete_records_answer_is_a_timeout_and_is_not_resent():
    with TestCluster(brokers=1) as c, kafka_of(c, request_timeout_s=1.0) as kafka:
        c.create_topic("purge")
        c.produce_many({("purge", 0): 10})
        c.drop(DELETE_RECORDS, times=1, apply=True)
        [outcome] = kafka.delete_records({("purge", 0): 6}).values()
        assert (outcome.low_watermark, outcome.error.name) == (-1, "REQUEST_TIMED_OUT")
        assert len(sent(c, "DeleteRecords")) == 1
        assert kafka.log_start_offsets([("purge", 0)]) == {("purge", 0): 6}


def test_a_lost_create_topics_answer_is_resent_and_already_exists_counts_as_created():
    with TestCluster(brokers=1) as c, kafka_of(c, request_timeout_s=1.0) as kafka:
        c.drop(CREATE_TOPICS, times=1, apply=True)
        assert kafka.create_topics([create("once")], validate_only=False) == {"once": None}
        assert len(sent(c, "CreateTopics")) == 2 and c.topic_names() == ["once"]


def test_a_read_whose_answer_is_lost_is_asked_of_another_broker():
    with TestCluster(brokers=3) as c, kafka_of(c, request_timeout_s=1.0) as kafka:
        c.create_topic("configured", configs={"retention.ms": "5000"})
        c.drop(DESCRIBE_CONFIGS, times=1)
        observed = kafka.observe_topics(["configured"])
        assert observed.topics["configured"].configs["retention.ms"].value == "5000"
        first, second = [r.broker_id for r in c.request_log if r.api_name == "DescribeConfigs"]
        assert first != second
