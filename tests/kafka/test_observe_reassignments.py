"""Reading what replica reassignments need, live on the test cluster: reassignments in progress
(ListPartitionReassignments), the sizes of the partitions that move, and the plans made from
them, including the checks made before anything is sent."""

from __future__ import annotations

import pytest

from reconciler.models.observed import PartitionReassignment
from reconciler.models.plan import ReassignReplicas
from reconciler.plan.planner import plan
from reconciler.testing import TestCluster
from tests.kafka.helpers import api_counts, kafka_of

pytestmark = pytest.mark.live


def reassignments(result) -> list[ReassignReplicas]:
    return [a for a in result.actions if isinstance(a, ReassignReplicas)]


def test_a_reassignment_in_progress_is_observed_and_the_plan_waits_for_it(test_cluster, desired_for):
    test_cluster.create_topic("moving", partitions=2, replication_factor=1)
    test_cluster.produce_many({("moving", 0): 50, ("moving", 1): 50})
    first = test_cluster.replicas("moving")[0][0]
    target = [first] + sorted({1, 2, 3} - {first})
    test_cluster.stall_reassignments(True)
    test_cluster.reassign("moving", {0: target})
    desired = desired_for("kind: Topic\nname: moving\npartitions: 2\nreplication_factor: 3\n")
    with kafka_of(test_cluster) as kafka:
        observed = kafka.observe_desired(desired)
    assert observed.reassignments == {"moving": {0: PartitionReassignment(adding_replicas=target[1:])}}
    assert observed.topics["moving"].partitions[0].replicas == target
    [action] = reassignments(plan(desired, observed))
    waiting = {m.partition: m for m in action.partitions}
    assert (waiting[0].before, waiting[0].after, waiting[0].in_progress) == ([first], target, True)
    assert not waiting[1].in_progress and len(waiting[1].after) == 3
    assert action.replication_factor_before == 1


def test_reassignments_are_read_with_one_request_only_when_declared_topics_are_planned(test_cluster, desired_for):
    test_cluster.create_topic("plain", partitions=1, replication_factor=1)
    desired = desired_for("kind: Topic\nname: plain\npartitions: 1\n")
    with kafka_of(test_cluster) as kafka:
        kafka.supports_epoch_fencing()
        test_cluster.clear_request_log()
        kafka.observe_desired(desired)
        assert api_counts(test_cluster)["ListPartitionReassignments"] == 1
        assert "DescribeLogDirs" not in api_counts(test_cluster)  # nothing moves, no retention change
        test_cluster.clear_request_log()
        kafka.observe_topics()  # import: no plan, no reassignment read
        assert "ListPartitionReassignments" not in api_counts(test_cluster)


def test_plan_one_to_three_shows_the_moves_and_the_bytes_to_copy(test_cluster, desired_for):
    test_cluster.create_topic("grow", partitions=3, replication_factor=1)
    test_cluster.produce_many({("grow", p): 100 for p in range(3)}, value_size=1000)
    desired = desired_for("kind: Topic\nname: grow\nreplication_factor: 3\n", cluster_extra="reassignment: {throttle: 10MiB}\n")
    with kafka_of(test_cluster) as kafka:
        test_cluster.clear_request_log()
        observed = kafka.observe_desired(desired)  # no sizes asked: the moving topic is sized anyway
    assert api_counts(test_cluster)["DescribeLogDirs"] == 3
    [action] = reassignments(plan(desired, observed))
    assert action.throttle_bytes_per_s == 10 * 2**20
    sizes = {p.partition: p.size_bytes for p in observed.topics["grow"].partitions}
    for move in action.partitions:
        assert sorted(move.after) == [1, 2, 3] and move.after[0] == move.before[0]
        assert sizes[move.partition] and move.bytes_to_copy == 2 * sizes[move.partition]
    # Each broker leads one partition and gains two replicas: balanced.
    assert sorted(b for m in action.partitions for b in m.adding) == [1, 1, 2, 2, 3, 3]


def test_a_broker_down_refuses_an_increase_that_needs_it(desired_for):
    with TestCluster(brokers=3) as cluster:
        cluster.create_topic("grow", partitions=1, replication_factor=1)
        cluster.stop_broker(3)
        desired = desired_for("kind: Topic\nname: grow\npartitions: 1\nreplication_factor: 3\n", cluster=cluster)
        with kafka_of(cluster) as kafka:
            result = plan(desired, kafka.observe_desired(desired))
    assert not result.actions
    [error] = result.diagnostics
    assert (error.severity.value, error.code) == ("error", "replication-factor-change")
    assert "replication factor 3 needs 3 brokers; 2 are eligible (1, 2)" in error.message


def test_a_decrease_below_the_brokers_min_insync_replicas_is_refused(desired_for):
    with TestCluster(brokers=3, broker_configs={"min.insync.replicas": "2"}) as cluster:
        cluster.create_topic("shrink", partitions=1, replication_factor=3)
        desired = desired_for("kind: Topic\nname: shrink\npartitions: 1\nreplication_factor: 1\n", cluster=cluster)
        with kafka_of(cluster) as kafka:
            result = plan(desired, kafka.observe_desired(desired))
    assert [(d.severity.value, d.code) for d in result.diagnostics] == [("error", "min-insync-above-replication")]
    assert "below its min.insync.replicas 2" in result.diagnostics[0].message
    assert result.has_errors


def test_racks_from_metadata_spread_the_new_replicas(desired_for):
    racks: dict[int, str | None] = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    with TestCluster(brokers=6, racks=racks) as cluster:
        cluster.create_topic("spread", partitions=6, replication_factor=1)
        desired = desired_for("kind: Topic\nname: spread\npartitions: 6\nreplication_factor: 3\n", cluster=cluster)
        with kafka_of(cluster) as kafka:
            observed = kafka.observe_desired(desired)
    assert {b.node_id: b.rack for b in observed.brokers} == racks
    [action] = reassignments(plan(desired, observed))
    assert all(sorted(str(racks[b]) for b in m.after) == ["a", "b", "c"] for m in action.partitions)
