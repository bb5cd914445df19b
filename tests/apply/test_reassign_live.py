"""Applying replica reassignments against the test cluster, over real sockets: throttles set while
replicas copy and removed afterwards, a bounded wait that reports "in progress" and resumes on the
next apply, cancel, stale plans, broker refusals, and the progress lines.

The plans are built here from what the cluster holds (the planner's own reassignment plans are
tested in tests/plan and, end to end through the CLI, in tests/cli)."""

from __future__ import annotations

import pytest

from reconciler.app.apply_plan import cancel_reassignments
from reconciler.apply.executor import ApplyOptions, apply_plan
from reconciler.kafka.connection import connect
from reconciler.manifests import load_manifests
from reconciler.models.plan import (
    AlterConfigs,
    ConfigChange,
    PartitionMove,
    Plan,
    ReassignReplicas,
    TopicPreconditions,
)
from reconciler.models.result import Status
from reconciler.ports import ConfigChangeOp, ConfigOp, ConfigResource, Visible
from reconciler.testing import TestCluster
from tests.kafka.helpers import CLUSTER, api_counts, kafka_of, write_manifests

LEADER_REPLICAS, FOLLOWER_REPLICAS = "leader.replication.throttled.replicas", "follower.replication.throttled.replicas"
RATES = {"leader.replication.throttled.rate", "follower.replication.throttled.rate"}
MiB = 1024 * 1024
QUICK = dict(reassignment_poll_s=0.05)


def move_plan(
    c,
    topic: str,
    targets: dict[int, list[int]],
    throttle: int | None = None,
    in_progress: dict[int, list[int]] | None = None,
    extra=(),
) -> Plan:
    """A plan moving `topic`'s partitions to `targets`, as the planner would make it from what the
    cluster holds now (`in_progress`: partitions already moving, with their original replicas)."""
    replicas = c.replicas(topic)
    moves = [
        PartitionMove(
            partition=p,
            before=(in_progress or {}).get(p, replicas[p]),
            after=after,
            bytes_to_copy=c.partition(topic, p).size_bytes * len(set(after) - set(replicas[p])),
            in_progress=p in (in_progress or {}),
        )
        for p, after in sorted(targets.items())
    ]
    before = {len(replicas[p]) for p in targets}
    action = ReassignReplicas(
        topic=topic,
        replication_factor_before=min(before),
        replication_factor_after=len(next(iter(targets.values()))),
        partitions=moves,
        throttle_bytes_per_s=throttle,
        preconditions=TopicPreconditions(exists=True, topic_id=c.topic_id(topic), partition_count=len(replicas)),
    )
    return Plan(cluster=CLUSTER, actions=[action, *extra])


def topics_yaml(*names: str, rf: int = 3, partitions: int = 2) -> str:
    return "".join(f"---\nkind: Topic\nname: {n}\npartitions: {partitions}\nreplication_factor: {rf}\n" for n in names)


def apply(c, desired, plan, lines: list[str] | None = None, progress=None, **options):
    with kafka_of(c) as kafka:
        return apply_plan(
            plan,
            kafka,
            desired,
            ApplyOptions(**{**QUICK, **options}),
            progress=progress or (lines.append if lines is not None else lambda _: None),
        )


def throttles(c, topic: str) -> dict:
    configs = c.topic_configs(topic)
    return {
        "topic": {k: configs[k] for k in (LEADER_REPLICAS, FOLLOWER_REPLICAS) if k in configs},
        "brokers": {
            b: {k: v for k, v in c.dynamic_broker_configs(b).items() if k in RATES}
            for b in c.broker_ids
            if any(k in RATES for k in c.dynamic_broker_configs(b))
        },
    }


def seeded(c, topic: str, replicas: list[list[int]], records: int = 50) -> None:
    c.create_topic(topic, partitions=len(replicas), replication_factor=len(replicas[0]))
    c.reassign(topic, dict(enumerate(replicas)))  # where the test wants them
    assert c.reassignments() == {}, "only reorders and removals, done at once"
    c.produce_many({(topic, p): records for p in range(len(replicas))}, timestamp_ms=1_790_000_000_000, step_ms=1000)


def test_one_to_three_throttled_waits_then_removes_the_throttles(test_cluster, desired_for):
    c = test_cluster
    c.create_topic("grow", partitions=2, replication_factor=1)
    c.produce_many({("grow", 0): 200, ("grow", 1): 200}, timestamp_ms=1_790_000_000_000, step_ms=1000)
    r = c.replicas("grow")
    targets = {p: [r[p][0], *[b for b in c.broker_ids if b != r[p][0]]] for p in r}
    lines: list[str] = []
    result = apply(
        c, desired_for(topics_yaml("grow")), move_plan(c, "grow", targets, throttle=50 * MiB), lines, elect_leaders=True
    )
    [outcome] = result.outcomes
    assert outcome.status is Status.APPLIED and outcome.message.startswith("replicas reassigned (2 reassigned)")
    assert [(p.partition, p.status, p.replicas) for p in outcome.partitions] == [(p, Status.APPLIED, targets[p]) for p in (0, 1)]
    assert c.replicas("grow") == targets and c.reassignments() == {}
    assert all(set(c.partition("grow", p).isr) == set(targets[p]) for p in (0, 1))
    assert throttles(c, "grow") == {"topic": {}, "brokers": {}}  # gone, topic configs and broker rates
    assert any(line.startswith("reassigning replicas of 2 partition(s), throttled at 50.0 MiB/s") for line in lines)
    assert any(line.startswith("reassigning replicas: 2 of 2 partition(s) done") for line in lines)


def test_stalled_reassignment_is_in_progress_keeps_its_throttles_and_the_next_apply_resumes(test_cluster, desired_for):
    c = test_cluster
    seeded(c, "slow", [[1], [2]])
    desired = desired_for(topics_yaml("slow"))
    targets = {0: [1, 2, 3], 1: [2, 3, 1]}
    c.stall_reassignments(True)
    later = AlterConfigs(
        topic="slow",
        changes=[ConfigChange(key="min.insync.replicas", op="set", after="2")],
        preconditions=TopicPreconditions(exists=True, topic_id=c.topic_id("slow")),
    )
    lines: list[str] = []
    result = apply(c, desired, move_plan(c, "slow", targets, throttle=MiB, extra=[later]), lines, reassignment_wait_s=0.3)
    moving, config = result.outcomes
    assert moving.status is Status.IN_PROGRESS
    assert "2 in progress; not finished within" in moving.message and "--cancel-reassignments" in moving.message
    assert [p.message for p in moving.partitions] == [
        "still copying: broker(s) 2, 3 catching up",
        "still copying: broker(s) 3, 1 catching up",
    ]
    # A min.insync.replicas raise needs the replicas being added: it waits for them.
    assert config.status is Status.REFUSED and "still in progress" in config.message
    assert not result.succeeded  # the config change was not made
    assert result.in_progress == ["slow-0", "slow-1"]
    # Throttles as kafka-reassign-partitions.sh sets them: current replicas lead, new ones follow.
    assert throttles(c, "slow") == {
        "topic": {LEADER_REPLICAS: "0:1,1:2", FOLLOWER_REPLICAS: "0:2,0:3,1:1,1:3"},
        "brokers": {b: dict.fromkeys(RATES, str(MiB)) for b in (1, 2, 3)},
    }
    assert "left to wait" in lines[-1] and "0 of 2 partition(s) done" in lines[-1]

    # The next apply (its plan marks the partitions in progress) sends nothing new, waits, cleans up.
    c.clear_request_log()
    resumed = move_plan(c, "slow", targets, throttle=MiB, in_progress={0: [1], 1: [2]})
    result = apply(
        c,
        desired,
        resumed,
        reassignment_wait_s=10,
        progress=lambda line: line.startswith("reassigning replicas: 0") and c.stall_reassignments(False),
    )
    [outcome] = result.outcomes
    assert outcome.status is Status.APPLIED, outcome
    assert "AlterPartitionReassignments" not in api_counts(c)
    assert c.replicas("slow") == targets
    assert throttles(c, "slow") == {"topic": {}, "brokers": {}}


def test_someone_elses_throttles_stay(test_cluster, desired_for):
    c = test_cluster
    seeded(c, "shared", [[1], [2]])
    # An operator's own throttle: entries for these very partitions, and a rate on broker 3.
    c.set_topic_configs("shared", {LEADER_REPLICAS: "1:2", FOLLOWER_REPLICAS: "1:3"})
    with kafka_of(c) as kafka:
        assert kafka.alter_config_ops(
            {ConfigResource("broker", "3"): [ConfigChangeOp("follower.replication.throttled.rate", ConfigOp.SET, "777")]}
        ) == {ConfigResource("broker", "3"): None}
        # The brokers show it a moment later; the operator's rate is there before apply reads.
        assert kafka.confirm_visible(Visible(brokers={3: {"follower.replication.throttled.rate": "777"}}), 5) == {}
    c.stall_reassignments(True)
    seen = []

    def watch(line: str) -> None:
        if line.startswith("reassigning replicas: 0 of 2"):
            seen.append(throttles(c, "shared"))
            c.stall_reassignments(False)

    result = apply(
        c,
        desired_for(topics_yaml("shared")),
        move_plan(c, "shared", {0: [1, 3], 1: [2, 3]}, throttle=MiB),
        progress=watch,
        reassignment_wait_s=10,
    )
    assert result.outcomes[0].status is Status.APPLIED
    # While copying: appended, never rewritten; 1:2 and 1:3 were there already.
    assert seen[-1] == {
        "topic": {LEADER_REPLICAS: "1:2,0:1", FOLLOWER_REPLICAS: "1:3,0:3"},
        "brokers": {1: dict.fromkeys(RATES, str(MiB)), 2: dict.fromkeys(RATES, str(MiB)), 3: dict.fromkeys(RATES, str(MiB))},
    }
    # Afterwards: exactly what was added is gone, the operator's entries and rate are back as they were.
    assert throttles(c, "shared") == {
        "topic": {LEADER_REPLICAS: "1:2", FOLLOWER_REPLICAS: "1:3"},
        "brokers": {3: {"follower.replication.throttled.rate": "777"}},
    }


def test_three_to_two_removes_a_replica_and_elects_the_preferred_leader(test_cluster, desired_for):
    c = test_cluster
    seeded(c, "shrink", [[1, 2, 3], [2, 3, 1]])
    c.move_leader("shrink", 1, to=3)
    result = apply(
        c, desired_for(topics_yaml("shrink", rf=2)), move_plan(c, "shrink", {0: [2, 3], 1: [2, 3]}), elect_leaders=True
    )
    assert result.outcomes[0].status is Status.APPLIED, result.outcomes[0]
    assert c.replicas("shrink") == {0: [2, 3], 1: [2, 3]}
    assert c.partition("shrink", 0).leader == 2 and c.partition("shrink", 1).leader == 2
    assert throttles(c, "shrink") == {"topic": {}, "brokers": {}}  # none asked for, none set


def test_a_stale_plan_is_refused_naming_the_partition_and_other_topics_still_apply(test_cluster, desired_for):
    c = test_cluster
    seeded(c, "moved.away", [[1], [2]])
    seeded(c, "still.fine", [[1], [2]])
    desired = desired_for(topics_yaml("moved.away", "still.fine"))
    stale = move_plan(c, "moved.away", {0: [1, 2, 3], 1: [2, 3, 1]})
    fine = move_plan(c, "still.fine", {0: [1, 3], 1: [2, 3]})
    later = AlterConfigs(
        topic="moved.away",
        changes=[ConfigChange(key="retention.ms", op="set", after="1000")],
        preconditions=TopicPreconditions(exists=True, topic_id=c.topic_id("moved.away")),
    )
    c.reassign("moved.away", {1: [3]})  # an operator moved partition 1 meanwhile
    result = apply(c, desired, Plan(cluster=CLUSTER, actions=[*stale.actions, *fine.actions, later]))
    refused, applied, config = result.outcomes
    assert refused.status is Status.REFUSED
    assert "moved.away-1 has replicas [3], the plan saw [2]" in refused.message
    assert "moved.away-0" not in refused.message
    assert config.status is Status.REFUSED and "not sent" in config.message
    assert applied.status is Status.APPLIED and c.replicas("still.fine") == {0: [1, 3], 1: [2, 3]}
    assert c.replicas("moved.away") == {0: [1], 1: [3]}


def test_a_reassignment_started_since_the_plan_is_refused(test_cluster, desired_for):
    c = test_cluster
    seeded(c, "raced", [[1]])
    plan = move_plan(c, "raced", {0: [1, 2]})
    c.stall_reassignments(True)
    c.reassign("raced", {0: [1, 3]})
    result = apply(c, desired_for(topics_yaml("raced")), plan)
    assert result.outcomes[0].status is Status.REFUSED
    assert "raced-0: a reassignment to [1, 3] started since the plan" in result.outcomes[0].message


def test_per_partition_broker_refusals_are_reported_and_throttles_still_removed(test_cluster, desired_for):
    c = test_cluster
    seeded(c, "half", [[1], [2]])
    result = apply(c, desired_for(topics_yaml("half")), move_plan(c, "half", {0: [1, 99], 1: [2, 3]}, throttle=MiB))
    [outcome] = result.outcomes
    assert outcome.status is Status.FAILED and outcome.message == "1 reassigned, 1 failed"
    bad, good = outcome.partitions
    assert bad.status is Status.FAILED and "INVALID_REPLICA_ASSIGNMENT" in bad.message and "99" in bad.message
    assert good.status is Status.APPLIED and c.replicas("half") == {0: [1], 1: [2, 3]}
    assert throttles(c, "half") == {"topic": {}, "brokers": {}}


def test_cancel_reverts_what_is_in_progress_on_managed_topics_and_removes_throttles(test_cluster, tmp_path):
    c = test_cluster
    seeded(c, "managed", [[1], [2]])
    seeded(c, "foreign", [[1]])
    root = write_manifests(
        tmp_path / "m", c.bootstrap_servers, topics_yaml("managed"), cluster_extra="reassignment: {throttle: 1MiB}\n"
    )
    desired = load_manifests(root).desired_state(CLUSTER)
    c.stall_reassignments(True)
    plan = move_plan(c, "managed", {0: [1, 2, 3], 1: [2, 3, 1]}, throttle=MiB)
    apply(c, desired, plan, reassignment_wait_s=0)
    c.reassign("foreign", {0: [1, 2]})  # not a managed topic: left alone
    assert throttles(c, "managed")["brokers"]

    lines: list[str] = []
    outcome = cancel_reassignments(str(root), CLUSTER, lambda spec: connect(spec, request_timeout_s=5.0), progress=lines.append)
    [cancelled] = outcome.result.outcomes
    assert cancelled.topic == "managed" and cancelled.status is Status.APPLIED
    assert [(p.partition, p.replicas, p.message) for p in cancelled.partitions] == [
        (0, [1], "reverted to [1] (it was moving to [1, 2, 3])"),
        (1, [2], "reverted to [2] (it was moving to [2, 3, 1])"),
    ]
    assert c.replicas("managed") == {0: [1], 1: [2]}
    assert throttles(c, "managed") == {"topic": {}, "brokers": {}}
    assert list(c.reassignments()) == [("foreign", 0)]
    assert lines == ["cancelling the reassignments of 2 partition(s)"]
    assert outcome.result.converged is False  # the manifests still ask for replication factor 3

    again = cancel_reassignments(str(root), CLUSTER, lambda spec: connect(spec, request_timeout_s=5.0))
    assert again.result.outcomes == []


def test_requests_do_not_grow_with_topics(desired_for):
    with TestCluster(brokers=3) as c:
        names = [f"t{i}" for i in range(6)]
        for name in names:
            seeded(c, name, [[1], [2]])
        plans = [move_plan(c, n, {0: [1, 2], 1: [2, 3]}, throttle=MiB) for n in names]
        c.clear_request_log()
        result = apply(
            c, desired_for(topics_yaml(*names), cluster=c), Plan(cluster=CLUSTER, actions=[a for p in plans for a in p.actions])
        )
        assert {o.status for o in result.outcomes} == {Status.APPLIED}
        counts = api_counts(c)
    assert counts["AlterPartitionReassignments"] == 1
    # Throttles: one DescribeConfigs / IncrementalAlterConfigs for the topics, one per broker.
    assert counts["IncrementalAlterConfigs"] == 2 * (1 + 3)


@pytest.mark.parametrize("racks", [None, ["a", "b", "c", "a", "b", "c"]])
def test_six_brokers_with_and_without_racks(desired_for, racks):
    with TestCluster(brokers=6, racks=racks) as c:
        seeded(c, "wide", [[1], [2], [3]])
        targets = {0: [1, 2, 3], 1: [2, 3, 4], 2: [3, 4, 5]}
        result = apply(c, desired_for(topics_yaml("wide", partitions=3), cluster=c), move_plan(c, "wide", targets, throttle=MiB))
        assert result.outcomes[0].status is Status.APPLIED
        assert c.replicas("wide") == targets
        assert throttles(c, "wide") == {"topic": {}, "brokers": {}}


def test_a_throttle_that_cannot_be_set_stops_the_reassignment_before_it_starts(test_cluster, desired_for):
    c = test_cluster
    seeded(c, "guarded", [[1], [2]])
    c.inject_error(api_key=44, error_code=44, times=1)  # IncrementalAlterConfigs: POLICY_VIOLATION, once
    c.clear_request_log()
    result = apply(c, desired_for(topics_yaml("guarded")), move_plan(c, "guarded", {0: [1, 2], 1: [2, 3]}, throttle=MiB))
    [outcome] = result.outcomes
    assert outcome.status is Status.FAILED
    assert all(
        p.message.startswith(
            "the replication throttle could not be set, so nothing was reassigned: topic guarded: POLICY_VIOLATION"
        )
        for p in outcome.partitions
    )
    assert "AlterPartitionReassignments" not in api_counts(c)
    assert c.replicas("guarded") == {0: [1], 1: [2]}
    assert throttles(c, "guarded") == {"topic": {}, "brokers": {}}  # the rates that were set are taken back
