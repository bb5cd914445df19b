"""The adapter's reassignment requests against the test cluster: AlterPartitionReassignments
(start, cancel, per-partition errors, batching), ListPartitionReassignments, ElectLeaders,
DescribeLogDirs of new replicas, and the throttle configs on topics and brokers."""

from __future__ import annotations

from reconciler.kafka import reassign as adapter
from reconciler.ports import ConfigChangeOp, ConfigOp, ConfigResource, ErrorKind, Reassignment, TopicShape, Visible
from reconciler.testing import TestCluster
from tests.kafka.helpers import api_counts, kafka_of, sent

LEADER_RATE, FOLLOWER_RATE = "leader.replication.throttled.rate", "follower.replication.throttled.rate"
LEADER_REPLICAS, FOLLOWER_REPLICAS = "leader.replication.throttled.replicas", "follower.replication.throttled.replicas"


def test_start_list_and_cancel_a_reassignment(test_cluster):
    c = test_cluster
    c.create_topic("moving", partitions=2, replication_factor=1)
    first = c.replicas("moving")[0][0]
    others = [b for b in c.broker_ids if b != first]
    c.stall_reassignments(True)
    with kafka_of(c) as kafka:
        assert kafka.list_reassignments(["moving"]) == {}
        assert kafka.alter_reassignments({("moving", 0): [first, *others]}) == {("moving", 0): None}
        running = kafka.list_reassignments(["moving"])
        assert running == {("moving", 0): Reassignment((first, *others), tuple(others), ())}
        assert running[("moving", 0)].original == [first] and running[("moving", 0)].target == [first, *others]
        moving = Visible(topics={"moving": TopicShape(replicas={0: ((first, *others),)})})
        assert kafka.confirm_visible(moving, 5) == {}
        assert kafka.partition_replicas(["moving"])[("moving", 0)] == [first, *others]

        # A cancel reverts at once (Metadata shows it a moment later); a second one finds nothing
        # in progress, which says the reassignment is over (NOTHING_IN_PROGRESS).
        assert kafka.alter_reassignments({("moving", 0): None}) == {("moving", 0): None}
        assert kafka.list_reassignments(["moving"]) == {}
        assert kafka.confirm_visible(Visible(topics={"moving": TopicShape(replicas={0: ((first,),)})}), 5) == {}
        assert kafka.partition_replicas(["moving"])[("moving", 0)] == [first]
        [again] = kafka.alter_reassignments({("moving", 0): None}).values()
        assert again is not None and again.kind is ErrorKind.NOTHING_IN_PROGRESS


def test_per_partition_refusals_carry_kafkas_code_and_message(test_cluster):
    c = test_cluster
    c.create_topic("refused", partitions=1, replication_factor=1)
    with kafka_of(c) as kafka:
        answers = kafka.alter_reassignments({("refused", 0): [1, 1], ("refused", 5): [1], ("nope", 0): [1]})
    assert answers[("refused", 0)].name == "INVALID_REPLICA_ASSIGNMENT"
    assert "more than once" in answers[("refused", 0)].message
    assert answers[("refused", 5)].name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert answers[("nope", 0)].name == "UNKNOWN_TOPIC_OR_PARTITION"
    with kafka_of(c) as kafka:
        [error] = kafka.alter_reassignments({("refused", 0): [1, 99]}).values()
    assert error is not None and error.name == "INVALID_REPLICA_ASSIGNMENT" and "99" in error.message


def test_requests_do_not_grow_with_topics_only_with_partitions(test_cluster, monkeypatch):
    c = test_cluster
    for i in range(6):
        c.create_topic(f"many.{i}", partitions=1, replication_factor=1)
    c.create_topic("wide", partitions=6, replication_factor=1)
    with kafka_of(c) as kafka:
        c.clear_request_log()
        kafka.alter_reassignments({(f"many.{i}", 0): c.replicas(f"many.{i}")[0] for i in range(6)})
        kafka.list_reassignments([f"many.{i}" for i in range(6)])
        assert api_counts(c)["AlterPartitionReassignments"] == 1
        assert api_counts(c)["ListPartitionReassignments"] == 1
        monkeypatch.setattr(adapter, "REASSIGN_CHUNK", 4)
        c.clear_request_log()
        kafka.alter_reassignments({("wide", p): r for p, r in c.replicas("wide").items()})
        assert api_counts(c)["AlterPartitionReassignments"] == 2
        assert sorted(len(t.partitions) for r in sent(c, "AlterPartitionReassignments") for t in r.topics) == [2, 4]


def test_new_replica_sizes_grow_as_it_copies(test_cluster):
    c = test_cluster
    c.create_topic("sized", partitions=1, replication_factor=1)
    c.produce_many({("sized", 0): 200}, timestamp_ms=1_790_000_000_000, step_ms=1000)
    [first] = c.replicas("sized")[0]
    new = next(b for b in c.broker_ids if b != first)
    c.set_replication_rate(1)  # one byte a second: the new replica is as good as empty
    with kafka_of(c) as kafka:
        kafka.alter_reassignments({("sized", 0): [first, new]})
        sizes = kafka.replica_sizes({("sized", 0): [first, new]})
        assert sizes[(("sized", 0), first)] == c.partition("sized", 0).size_bytes > 0
        assert sizes.get((("sized", 0), new), 0) < sizes[(("sized", 0), first)]
        c.set_replication_rate(None)
        assert kafka.replica_sizes({("sized", 0): [new]})[(("sized", 0), new)] == c.partition("sized", 0).size_bytes


def test_preferred_leader_election(test_cluster):
    c = test_cluster
    c.create_topic("elect", partitions=1, replication_factor=3)
    preferred = c.replicas("elect")[0][0]
    with kafka_of(c) as kafka:
        assert kafka.elect_preferred_leaders([("elect", 0)]) == {("elect", 0): None}  # ELECTION_NOT_NEEDED
        other = c.replicas("elect")[0][1]
        c.move_leader("elect", 0, to=other)
        assert kafka.elect_preferred_leaders([("elect", 0)]) == {("elect", 0): None}
        assert c.partition("elect", 0).leader == preferred
        [error] = kafka.elect_preferred_leaders([("elect", 7)]).values()
    assert error is not None and error.name == "UNKNOWN_TOPIC_OR_PARTITION"


def test_throttle_configs_on_topics_and_each_brokers_own_entity(test_cluster):
    c = test_cluster
    c.create_topic("throttled", partitions=2, replication_factor=1, configs={LEADER_REPLICAS: "1:3"})
    topic = ConfigResource("topic", "throttled")
    brokers = [ConfigResource("broker", str(b)) for b in c.broker_ids]
    with kafka_of(c) as kafka:
        assert kafka.describe_config_values([topic, *brokers], [LEADER_REPLICAS, LEADER_RATE]) == {
            topic: {LEADER_REPLICAS: "1:3"},
            **{b: {} for b in brokers},
        }
        answers = kafka.alter_config_ops(
            {
                topic: [
                    ConfigChangeOp(LEADER_REPLICAS, ConfigOp.APPEND, "0:1,0:2"),
                    ConfigChangeOp(FOLLOWER_REPLICAS, ConfigOp.APPEND, "0:3"),
                ],
                **{
                    b: [ConfigChangeOp(LEADER_RATE, ConfigOp.SET, "1000"), ConfigChangeOp(FOLLOWER_RATE, ConfigOp.SET, "1000")]
                    for b in brokers
                },
            }
        )
        assert set(answers.values()) == {None}
        set_everywhere = Visible(
            topics={"throttled": TopicShape(configs={LEADER_REPLICAS: "1:3,0:1,0:2", FOLLOWER_REPLICAS: "0:3"})},
            brokers={b: {LEADER_RATE: "1000", FOLLOWER_RATE: "1000"} for b in c.broker_ids},
        )
        assert kafka.confirm_visible(set_everywhere, 5) == {}
        assert c.topic_configs("throttled")[LEADER_REPLICAS] == "1:3,0:1,0:2"
        assert c.dynamic_broker_configs(2) == {LEADER_RATE: "1000", FOLLOWER_RATE: "1000"}
        # Each broker resource went to that broker (another one refuses it).
        assert sorted(
            (r.broker_id, r.request.resources[0].resource_name)
            for r in c.request_log
            if r.api_name == "IncrementalAlterConfigs" and r.request.resources[0].resource_type == 4
        ) == [(b, str(b)) for b in c.broker_ids]
        answers = kafka.alter_config_ops(
            {
                topic: [
                    ConfigChangeOp(LEADER_REPLICAS, ConfigOp.SUBTRACT, "0:1,0:2"),
                    ConfigChangeOp(FOLLOWER_REPLICAS, ConfigOp.DELETE),
                ],
                brokers[1]: [ConfigChangeOp(LEADER_RATE, ConfigOp.DELETE), ConfigChangeOp(FOLLOWER_RATE, ConfigOp.DELETE)],
            }
        )
        assert set(answers.values()) == {None}
        removed = Visible(
            topics={"throttled": TopicShape(configs={LEADER_REPLICAS: "1:3", FOLLOWER_REPLICAS: None})},
            brokers={2: {LEADER_RATE: None, FOLLOWER_RATE: None}},
        )
        assert kafka.confirm_visible(removed, 5) == {}
        assert kafka.describe_config_values([topic, brokers[1]], [LEADER_REPLICAS, FOLLOWER_REPLICAS, LEADER_RATE]) == {
            topic: {LEADER_REPLICAS: "1:3"},
            brokers[1]: {},
        }


def test_a_stopped_broker_is_reported_in_the_answer_not_raised():
    with TestCluster(brokers=2) as c, kafka_of(c) as kafka:
        c.stop_broker(2)
        answers = kafka.alter_config_ops({ConfigResource("broker", "2"): [ConfigChangeOp(LEADER_RATE, ConfigOp.SET, "1")]})
    [error] = answers.values()
    assert error is not None
