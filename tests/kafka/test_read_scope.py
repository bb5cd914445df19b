"""What to read, decided from manifests or a plan, without a cluster."""

from __future__ import annotations

from datetime import datetime, timezone

from reconciler.models.desired import (
    BeforeOffset,
    BeforeTime,
    ClusterSpec,
    ConsumedBy,
    DesiredState,
    DesiredTopic,
    KeepLast,
    TopicState,
)
from reconciler.models.plan import (
    AlterConfigs,
    ConfigChange,
    CreateTopic,
    PartitionTruncation,
    Plan,
    RetentionCut,
    TopicPreconditions,
    TruncateRecords,
)
from reconciler.plan.read_scope import desired_scope, plan_scope, timestamp_slots, topics_scope

T1 = datetime(2026, 10, 1, tzinfo=timezone.utc)


def topic(name, truncate=(), state=TopicState.PRESENT):
    return DesiredTopic(name=name, partitions=1, replication_factor=1, truncate=list(truncate), state=state)


def test_desired_scope_lists_everything_and_collects_what_the_rules_need():
    desired = DesiredState(
        cluster=ClusterSpec(name="c", bootstrap_servers=["k:9092"]),
        topics={
            t.name: t
            for t in [
                topic("plain"),
                topic("timed", [BeforeTime(timestamp=T1), KeepLast(records=5)]),
                topic("consumed", [ConsumedBy(groups=["billing", "audit"])]),
                topic("also-billing", [ConsumedBy(groups=["billing"]), BeforeOffset(offset=3)]),
                topic("gone", [KeepLast(records=1)], state=TopicState.ABSENT),
            ]
        },
    )
    scope = desired_scope(desired)
    assert scope.list_all and scope.metadata_topics is None
    assert scope.topics == {"plain", "timed", "consumed", "also-billing", "gone"}
    assert scope.wants("gone") and not scope.wants("unmanaged")
    assert scope.timestamps == {"timed": (int(T1.timestamp() * 1000),)}
    # Rules of a topic declared absent never become truncations, so they need no epochs; a
    # truncation shows the bytes it deletes, and a deletion those it frees: their topics are sized.
    assert scope.epoch_topics == {"timed", "consumed", "also-billing"}
    assert scope.size_topics == {"timed", "consumed", "also-billing", "gone"}
    assert scope.groups == {"audit": {"consumed"}, "billing": {"consumed", "also-billing"}}
    assert scope.offset_topics is None and scope.reads_offsets("unmanaged")
    # A plan's read asks for the offsets its plan shows: truncations, and the records a deletion deletes.
    shown = desired_scope(desired, every_offset=False)
    assert shown.offset_topics == {"timed", "consumed", "also-billing", "gone"} and not shown.reads_offsets("plain")


def test_topics_scope_names_or_everything():
    assert topics_scope(None).topics is None and topics_scope(None).wants("anything")
    named = topics_scope(["b", "a"])
    assert named.metadata_topics == ["a", "b"] and not named.list_all and not named.wants("c")


def test_plan_scope_rereads_the_plans_topics_and_proves_epochs_for_truncations():
    exists = TopicPreconditions(exists=True)
    plan = Plan(
        cluster="c",
        actions=[
            CreateTopic(topic="new", partitions=1, replication_factor=1, preconditions=TopicPreconditions(exists=False)),
            AlterConfigs(topic="conf", preconditions=exists, changes=[ConfigChange(key="retention.ms", op="delete")]),
            TruncateRecords(
                topic="cut",
                preconditions=exists,
                rules=[],
                rule_kinds=[],
                partitions=[
                    PartitionTruncation(
                        partition=0, target_offset=1, leader=1, leader_epoch=0, log_start_offset=0, high_watermark=2
                    )
                ],
            ),
        ],
    )
    scope = plan_scope(plan)
    assert scope.metadata_topics == ["conf", "cut", "new"]
    assert scope.epoch_topics == {"cut"} and not scope.timestamps and not scope.groups


def test_timestamp_slots_depend_on_rules_per_topic_not_on_topics():
    assert timestamp_slots({}) == 0
    assert timestamp_slots({f"t{i}": (1,) for i in range(10_000)}) == 1
    assert timestamp_slots({"a": (1, 2), "b": (3,)}) == 2


def test_retention_lookups_and_sizes_join_the_batched_reads_without_growing_with_topics():
    now = 1_800_000_000_000
    day = 86_400_000
    topics = [
        DesiredTopic(name=f"t{i}", partitions=1, replication_factor=1, configs={"retention.ms": str(day)}) for i in range(1000)
    ]
    topics += [
        DesiredTopic(name="bytes-only", partitions=1, replication_factor=1, configs={"retention.bytes": "1"}),
        DesiredTopic(name="untouched", partitions=1, replication_factor=1),
    ]
    desired = DesiredState(cluster=ClusterSpec(name="c", bootstrap_servers=["k:9092"]), topics={t.name: t for t in topics})
    scope = desired_scope(desired, now_ms=now)
    assert scope.now_ms == now and timestamp_slots(scope.timestamps) == 1
    assert scope.timestamps["t7"] == (now - day,) and "bytes-only" not in scope.timestamps
    assert scope.size_topics == {t.name for t in topics} - {"untouched"}
    # Without an instant (a plan's first read) no retention lookups: `estimate_scope` asks for them.
    assert not desired_scope(desired).timestamps and not desired_scope(desired).size_topics


def test_plan_scope_reads_what_estimating_a_retention_cut_again_needs():
    cut = RetentionCut(effects=["records older than 1d are deleted"], retention_ms=86_400_000)
    plan = Plan(
        cluster="c",
        actions=[
            AlterConfigs(
                topic="conf",
                preconditions=TopicPreconditions(exists=True),
                destructive=True,
                retention=cut,
                changes=[ConfigChange(key="retention.ms", op="set", after="86400000")],
            )
        ],
    )
    scope = plan_scope(plan, now_ms=1_000_000_000)
    assert scope.timestamps == {"conf": (1_000_000_000 - 86_400_000,)} and scope.size_topics == {"conf"}
