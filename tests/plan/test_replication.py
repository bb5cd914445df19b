"""Replica reassignments in the pure planner: which partitions move where, in-progress
reassignments, and every check made before anything is sent."""

from __future__ import annotations

from reconciler.models.desired import ClusterSpec, DesiredState, Policy, ReassignmentSettings
from reconciler.models.observed import (
    Broker,
    ConfigSource,
    ObservedConfig,
    ObservedPartition,
    ObservedState,
    ObservedTopic,
    PartitionReassignment,
)
from reconciler.models.plan import AlterConfigs, ReassignReplicas
from reconciler.plan.planner import plan
from reconciler.render import render_plan
from tests.factories import each, have, observed, want

MiB = 2**20


def brokers(*ids: int, racks: dict[int, str] | None = None) -> list[Broker]:
    return [Broker(node_id=i, host=f"kafka-{i}", port=9092, rack=(racks or {}).get(i)) for i in ids]


def topic(
    name: str,
    assignment: list[list[int]],
    isr: list[list[int]] | None = None,
    size: int | None = 10 * MiB,
    leader: list[int] | None = None,
    configs: dict[str, ObservedConfig] | None = None,
) -> ObservedTopic:
    parts = []
    for i, replicas in enumerate(assignment):
        lead = leader[i] if leader else replicas[0]
        in_sync = isr[i] if isr else replicas
        parts.append(
            ObservedPartition(
                partition=i,
                leader=lead,
                leader_epoch=3 if lead >= 0 else -1,
                replicas=replicas,
                isr=in_sync,
                log_start_offset=0 if lead >= 0 else -1,
                high_watermark=100 if lead >= 0 else -1,
                size_bytes=size,
            )
        )
    return ObservedTopic(name=name, topic_id=f"id-{name}", partitions=parts, configs=configs or {})


def cluster(*topics: ObservedTopic, alive=(1, 2, 3), racks=None, reassignments=None) -> ObservedState:
    return ObservedState(
        cluster="test",
        cluster_id="c1",
        brokers=brokers(*alive, racks=racks),
        topics={t.name: t for t in topics},
        reassignments=reassignments or {},
    )


def desired(*topics, drain=(), policy=Policy(), throttle=None) -> DesiredState:
    spec = ClusterSpec(
        name="test",
        bootstrap_servers=["localhost:9092"],
        drain_brokers=list(drain),
        reassignment=ReassignmentSettings(throttle_bytes_per_s=throttle),
    )
    return DesiredState(cluster=spec, topics={t.name: t for t in topics}, policy=policy)


def reassignment(result) -> ReassignReplicas:
    [action] = [a for a in result.actions if isinstance(a, ReassignReplicas)]
    return action


def moves(action: ReassignReplicas) -> dict[int, tuple[list[int], list[int]]]:
    return {m.partition: (m.before, m.after) for m in action.partitions}


def codes(result) -> list[tuple[str, str, int | None]]:
    return [(d.severity.value, d.code, d.partition) for d in result.diagnostics]


def test_one_to_three_adds_two_replicas_per_partition_balanced_keeping_the_leader_with_bytes_and_throttle():
    result = plan(desired(want("a", partitions=3, replication_factor=3), throttle=50 * MiB), cluster(topic("a", [[1], [2], [3]])))
    action = reassignment(result)
    assert not result.diagnostics
    assert (action.replication_factor_before, action.replication_factor_after) == (1, 3)
    assert action.throttle_bytes_per_s == 50 * MiB
    for m in action.partitions:
        assert m.after[0] == m.before[0] and sorted(m.after) == [1, 2, 3] and not m.removing
        assert m.bytes_to_copy == 2 * 10 * MiB and not m.in_progress
    assert action.bytes_to_copy == 60 * MiB
    assert action.preconditions.topic_id == "id-a" and action.preconditions.partition_count == 3
    assert "replication_factor 3" in action.reason


def test_three_to_two_only_removes_and_prefers_out_of_sync_replicas():
    result = plan(
        desired(want("a", partitions=2, replication_factor=2)),
        cluster(topic("a", [[1, 2, 3], [2, 3, 1]], isr=[[1, 2], [2, 3, 1]])),
    )
    action = reassignment(result)
    assert moves(action)[0] == ([1, 2, 3], [1, 2])  # 3 is out of sync
    before, after = moves(action)[1]
    assert after[0] == 2 and len(after) == 2 and set(after) < set(before)
    assert action.bytes_to_copy == 0 and not result.diagnostics


def test_same_factor_and_nothing_drained_plans_nothing():
    result = plan(desired(want("a", partitions=2, replication_factor=3)), cluster(topic("a", [[1, 2, 3], [2, 3, 1]])))
    assert not result.actions and not result.diagnostics


def test_a_drained_broker_is_emptied_only_where_it_holds_replicas():
    result = plan(
        desired(want("a", partitions=3, replication_factor=2), drain=[3]),
        cluster(topic("a", [[1, 2], [3, 1], [2, 3]]), alive=(1, 2, 3, 4)),
    )
    action = reassignment(result)
    assert sorted(moves(action)) == [1, 2]
    assert all(3 not in m.after and len(m.after) == 2 and 4 in m.after for m in action.partitions)
    assert "drains broker 3" in action.reason
    assert (action.replication_factor_before, action.replication_factor_after) == (2, 2)


def test_a_pinned_assignment_that_differs_is_moved_to_as_written():
    result = plan(
        desired(want("a", partitions=2, replication_factor=2, replica_assignment={1: [3, 1]})),
        cluster(topic("a", [[1, 2], [2, 3]])),
    )
    assert moves(reassignment(result)) == {1: ([2, 3], [3, 1])}


def test_pinned_lists_name_unknown_drained_and_down_brokers_as_errors_per_partition():
    have = topic("a", [[1, 2], [2, 4], [1, 2]])  # 4 holds a replica but is not in Metadata: down
    result = plan(
        desired(want("a", partitions=3, replication_factor=2, replica_assignment={0: [1, 9], 1: [2, 3], 2: [4, 1]}), drain=[3]),
        cluster(have),
    )
    assert not result.actions
    assert codes(result) == [
        ("error", "replica-assignment-invalid", 0),
        ("error", "replica-assignment-invalid", 1),
        ("error", "replica-assignment-invalid", 2),
    ]
    messages = [d.message for d in result.diagnostics]
    assert "broker 9, which is not in the cluster (brokers 1, 2, 3)" in messages[0]
    assert "broker 3, which the cluster drains" in messages[1]
    assert "adds broker 4, which is down" in messages[2]


def test_racks_spread_replicas_and_a_factor_above_the_racks_is_a_warning():
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    spread = plan(
        desired(want("a", partitions=6, replication_factor=3)),
        cluster(topic("a", [[b] for b in range(1, 7)]), alive=range(1, 7), racks=racks),
    )
    for m in reassignment(spread).partitions:
        assert sorted(racks[b] for b in m.after) == ["a", "b", "c"]
    assert not spread.diagnostics
    crowded = plan(
        desired(want("a", partitions=2, replication_factor=4)), cluster(topic("a", [[1], [3]]), alive=range(1, 7), racks=racks)
    )
    assert codes(crowded) == [("warning", "rack-spread", None)]
    assert "replication factor 4 on 3 rack(s) (a, b, c)" in crowded.diagnostics[0].message


def test_brokers_without_a_rack_among_racked_ones_is_a_warning():
    result = plan(desired(want("a", partitions=1, replication_factor=2)), cluster(topic("a", [[1]]), racks={1: "a", 2: "b"}))
    assert codes(result) == [("warning", "rack-spread", None)] and "ignores racks" in result.diagnostics[0].message


def test_placement_counts_every_topic_on_the_cluster_and_topics_share_the_balance():
    busy = topic("busy", [[1, 2], [2, 1], [1, 2], [2, 1]])
    result = plan(
        desired(want("a", partitions=2, replication_factor=2), want("b", partitions=2, replication_factor=2)),
        cluster(busy, topic("a", [[1], [2]]), topic("b", [[1], [2]]), alive=(1, 2, 3, 4)),
    )
    added = [b for a in each(result.actions, ReassignReplicas) for m in a.partitions for b in m.adding]
    assert sorted(added) == [3, 3, 4, 4]  # never onto the loaded 1 and 2, spread over a and b together


def test_a_plan_of_part_of_the_cluster_given_the_replicas_elsewhere_places_and_checks_as_the_whole_plan():
    # `busy` loads brokers 3 and 4, and only it holds a replica on 7 (down: not in Metadata).
    busy = topic("busy", [[3, 4, 7], [4, 3, 7], [3, 4, 7], [4, 3, 7]])
    moving = [topic("a", [[1], [2]]), topic("b", [[1], [2]]), topic("c", [[1, 2], [2, 1]])]
    manifests = desired(
        want("a", partitions=2, replication_factor=2),
        want("b", partitions=2, replication_factor=2),
        want("c", partitions=2, replication_factor=2, replica_assignment={0: [1, 7]}),
    )
    whole = plan(
        manifests.model_copy(update={"topics": {**manifests.topics, "busy": want("busy")}}),
        cluster(busy, *moving, alive=(1, 2, 3, 4)),
    )
    part = cluster(*moving, alive=(1, 2, 3, 4))
    given = plan(manifests, part, elsewhere=lambda: {"busy": {p.partition: p.replicas for p in busy.partitions}})
    mine = {"a", "b", "c"}
    assert [a for a in whole.actions if a.topic in mine] == given.actions
    assert [d for d in whole.diagnostics if d.topic in mine] == given.diagnostics
    assert "adds broker 7, which is down" in given.diagnostics[0].message
    # Without them, the plan would place onto the brokers `busy` loads and call 7 unknown.
    blind = plan(manifests, part)
    assert blind.actions != given.actions
    assert "broker 7, which is not in the cluster" in blind.diagnostics[0].message


def test_the_plan_is_the_same_for_the_same_input():
    def once():
        return plan(
            desired(want("b", partitions=4, replication_factor=2), want("a", partitions=4, replication_factor=3)),
            cluster(topic("b", [[1], [2], [3], [4]]), topic("a", [[4], [3], [2], [1]]), alive=(4, 3, 2, 1)),
        )

    assert once() == once()


def test_a_broker_down_refuses_an_increase_that_needs_it():
    have = topic("a", [[1], [2]], isr=[[1], [2]])
    other = topic("other", [[3, 1]], isr=[[1]], leader=[1])  # 3 is down: in a replica list, not in Metadata
    result = plan(
        desired(want("a", partitions=2, replication_factor=3), want("other", partitions=1, replication_factor=2)),
        cluster(have, other, alive=(1, 2)),
    )
    assert not result.actions
    assert codes(result) == [("error", "replication-factor-change", None)]
    assert "3 needs 3 brokers; 2 are eligible (1, 2; 3 is down)" in result.diagnostics[0].message


def test_a_factor_below_the_effective_min_insync_replicas_is_an_error():
    inherited = {"min.insync.replicas": ObservedConfig(value="2", source=ConfigSource.STATIC_BROKER_CONFIG)}
    result = plan(desired(want("a", partitions=1, replication_factor=1)), cluster(topic("a", [[1, 2, 3]], configs=inherited)))
    assert codes(result) == [("error", "min-insync-above-replication", None)]
    assert "below its min.insync.replicas 2" in result.diagnostics[0].message
    assert result.diagnostics[0].key == "min.insync.replicas"
    # Lowered by the same plan's config change: fine.
    lowered = plan(
        desired(want("a", partitions=1, replication_factor=1, configs={"min.insync.replicas": "1"})),
        cluster(topic("a", [[1, 2, 3]], configs=inherited)),
    )
    assert not lowered.diagnostics and {a.kind.value for a in lowered.actions} == {"reassign_replicas", "alter_configs"}


def test_removing_the_override_lets_the_inherited_min_insync_replicas_count():
    set_here = {"min.insync.replicas": ObservedConfig(value="1", source=ConfigSource.DYNAMIC_TOPIC_CONFIG)}
    inherited = {"min.insync.replicas": ObservedConfig(value="3", source=ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)}
    result = plan(
        desired(
            want("a", partitions=1, replication_factor=2, undeclared_configs="remove"),
            want("b", partitions=1, replication_factor=3),
        ),
        cluster(topic("a", [[1, 2, 3]], configs=set_here), topic("b", [[1, 2, 3]], configs=inherited)),
    )
    assert ("error", "min-insync-above-replication", None) in codes(result)


def test_a_factor_the_policy_does_not_allow_is_an_error():
    result = plan(
        desired(want("a", partitions=1, replication_factor=2), policy=Policy(allowed_replication_factors=[1, 3])),
        cluster(topic("a", [[1]])),
    )
    assert codes(result) == [("error", "policy-replication-factor", None)]


def test_a_decrease_never_removes_the_last_in_sync_replica():
    # Only 2 is in sync: the preferred leader 1 gives way rather than leave no in-sync replica.
    result = plan(desired(want("a", partitions=1, replication_factor=1)), cluster(topic("a", [[1, 2]], isr=[[2]], leader=[2])))
    assert moves(reassignment(result)) == {0: ([1, 2], [2])} and not result.diagnostics


def test_an_offline_partition_cannot_be_moved():
    result = plan(desired(want("a", partitions=1, replication_factor=2)), cluster(topic("a", [[1]], isr=[[]], leader=[-1])))
    assert codes(result) == [("error", "partition-offline", 0)]


def test_a_reassignment_in_progress_toward_the_planned_target_is_waited_for():
    # 1 -> 3 started by an earlier apply: Metadata shows the target, adding 2 and 3.
    have = topic("a", [[1, 2, 3]], isr=[[1]])
    running = {"a": {0: PartitionReassignment(adding_replicas=[2, 3])}}
    result = plan(desired(want("a", partitions=1, replication_factor=3)), cluster(have, reassignments=running))
    [move] = reassignment(result).partitions
    assert (move.before, move.after, move.in_progress) == ([1], [1, 2, 3], True)
    assert "in progress" in render_plan(result, "text")


def test_a_reassignment_in_progress_toward_another_target_is_left_alone_with_a_warning():
    # Someone moves [1, 2, 3] to [4, 5, 6] and the manifest now wants 2 replicas.
    have = topic("a", [[4, 5, 6, 1, 2, 3], [1, 2, 3]], isr=[[1, 2, 3], [1, 2, 3]])
    running = {"a": {0: PartitionReassignment(adding_replicas=[4, 5, 6], removing_replicas=[1, 2, 3])}}
    result = plan(desired(want("a", partitions=2, replication_factor=2)), cluster(have, alive=range(1, 7), reassignments=running))
    assert sorted(moves(reassignment(result))) == [1]
    assert codes(result) == [("warning", "reassignment-in-progress", 0)]
    message = result.diagnostics[0].message
    assert "toward [4, 5, 6] (from [1, 2, 3])" in message and "the manifests want [4, 5]" in message


def test_someone_elses_reassignment_the_manifests_do_not_care_about_is_only_noted():
    have = topic("a", [[4, 5, 6, 1, 2, 3]], isr=[[1, 2, 3]])
    running = {"a": {0: PartitionReassignment(adding_replicas=[4, 5, 6], removing_replicas=[1, 2, 3])}}
    result = plan(desired(want("a", partitions=1, replication_factor=3)), cluster(have, alive=range(1, 7), reassignments=running))
    assert not result.actions and codes(result) == [("info", "reassignment-in-progress", 0)]


def test_unknown_sizes_make_the_copy_size_unknown():
    result = plan(desired(want("a", partitions=1, replication_factor=2)), cluster(topic("a", [[1]], size=None)))
    action = reassignment(result)
    assert action.partitions[0].bytes_to_copy is None and action.bytes_to_copy is None
    assert "copy size unknown" in render_plan(result, "text")


def test_the_plan_shows_each_moving_partition_in_text_markdown_and_json():
    result = plan(
        desired(want("orders", partitions=2, replication_factor=3), throttle=50 * MiB), cluster(topic("orders", [[1], [2]]))
    )
    text = render_plan(result, "text")
    assert "orders: replication factor 1 -> 3 in 2 partitions, copies 40.0 MiB, throttled at 50.0 MiB/s" in text
    assert "0  [1]           [1, 3, 2]       +3 +2   20.0 MiB" in text
    assert "| 0 | [1] | [1, 3, 2] | +3 +2 | 20.0 MiB |" in render_plan(result, "markdown")
    assert '"bytes_to_copy": 20971520' in render_plan(result, "json")


def test_a_replication_throttle_is_left_alone_while_a_reassignment_runs_and_removed_once_none_does():
    throttled = {"leader.replication.throttled.replicas": "0:1", "follower.replication.throttled.replicas": "0:2"}
    topic = have("a", partitions=1, replication_factor=1, set_on_topic=throttled)
    brokers = [Broker(node_id=i, host="b", port=9092) for i in (1, 2, 3)]
    idle = observed(topic).model_copy(update={"brokers": brokers})
    [cleanup] = plan(desired(want("a", partitions=1, replication_factor=1)), idle).actions
    assert isinstance(cleanup, AlterConfigs)
    assert [(c.key, c.op) for c in cleanup.changes] == [
        ("follower.replication.throttled.replicas", "delete"),
        ("leader.replication.throttled.replicas", "delete"),
    ]
    assert "replication throttle left behind" in cleanup.reason
    moving = topic.model_copy(update={"partitions": [topic.partitions[0].model_copy(update={"replicas": [1, 2]})]})
    running = observed(moving).model_copy(
        update={"brokers": brokers, "reassignments": {"a": {0: PartitionReassignment(adding_replicas=[2])}}}
    )
    result = plan(desired(want("a", partitions=1, replication_factor=2)), running)
    assert not [a for a in result.actions if isinstance(a, AlterConfigs)]
    assert not [d for d in result.diagnostics if d.code == "undeclared-config"]
