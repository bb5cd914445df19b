"""What the read scope asks for replica reassignments: reassignments in progress where a plan
needs them, and partition sizes for the topics whose replicas Metadata shows must move."""

from __future__ import annotations

from reconciler.models.desired import ClusterSpec, DesiredState, TopicState
from reconciler.models.plan import PartitionMove, Plan, ReassignReplicas, TopicPreconditions
from reconciler.plan.read_scope import ReplicaWant, desired_scope, plan_scope, topics_scope
from tests.factories import want


def desired(*topics, drain=()) -> DesiredState:
    return DesiredState(
        cluster=ClusterSpec(name="c", bootstrap_servers=["k:9092"], drain_brokers=list(drain)), topics={t.name: t for t in topics}
    )


def test_planning_declared_topics_reads_reassignments_and_knows_what_their_replicas_must_be():
    scope = desired_scope(
        desired(
            want("a", replication_factor=3, replica_assignment={0: [3, 1, 2]}), want("gone", state=TopicState.ABSENT), drain=[4]
        )
    )
    assert scope.reassignments and scope.drain_brokers == {4}
    assert scope.replicas == {"a": ReplicaWant(3, {0: (3, 1, 2)})}
    assert not topics_scope(None).reassignments


def test_topics_whose_replicas_move_are_sized_the_others_not():
    scope = desired_scope(
        desired(
            want("same", replication_factor=2),
            want("grow", replication_factor=3),
            want("drained", replication_factor=2),
            want("pinned", replication_factor=2, replica_assignment={1: [2, 1]}),
            drain=[4],
        )
    )
    seen = {"same": [[1, 2], [2, 1]], "grow": [[1, 2]], "drained": [[1, 4]], "pinned": [[1, 2], [1, 2]], "undeclared": [[1]]}
    assert scope.with_moving_sizes(seen).size_topics == {"grow", "drained", "pinned"}
    assert scope.with_moving_sizes({"same": seen["same"]}) is scope
    assert scope.with_moving_sizes(seen).offset_topics is None  # every offset, as asked
    shown_only = desired_scope(
        desired(want("same", replication_factor=2), want("grow", replication_factor=3)), every_offset=False
    )
    assert shown_only.offset_topics == set()
    # A move shows the data it copies, and its partitions' leaders decide whether it can start.
    assert shown_only.with_moving_sizes(seen).offset_topics == {"grow"}


def test_apply_re_reads_reassignments_only_for_a_plan_that_reassigns():
    move = ReassignReplicas(
        topic="a",
        replication_factor_before=1,
        replication_factor_after=2,
        partitions=[PartitionMove(partition=0, before=[1], after=[1, 2])],
        preconditions=TopicPreconditions(exists=True),
    )
    assert plan_scope(Plan(cluster="c", actions=[move])).reassignments
    assert not plan_scope(Plan(cluster="c")).reassignments
